/// How large and how deep an HDF5 file the reader walks. Checked while listing, before any data is
/// read: a file past a limit is refused with `.limitExceeded`, naming the object and the limit.
/// State dicts are far inside them: MobileSAM's has 238 datasets at most 8 groups deep, SAM ViT-H's
/// about 600; a weight tensor is at most a few hundred MB.
public struct HDF5Limits: Sendable, Equatable {
    /// Groups inside groups below the root.
    public var maximumGroupDepth = 64
    /// Links listed over the whole file (datasets, groups, named types): the walk's work.
    public var maximumObjects = 20_000
    /// Chunks one dataset may be split into (each is a B-tree lookup and a filter call when read).
    public var maximumChunksPerDataset = 65_536
    /// Declared bytes over stored bytes for a filtered (compressed) dataset. Deflate cannot exceed
    /// 1032:1 (zlib's technical notes); a dataset claiming more is a decompression bomb or a lie.
    public var maximumExpansion = 1_100
    /// Bytes of one dataset in memory.
    public var maximumDatasetBytes = 16 << 30
    /// Attributes rendered per object (more are counted, not read).
    public var maximumAttributesPerObject = 256

    public init() {}

    public static let `default` = HDF5Limits()
}
