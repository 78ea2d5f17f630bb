/// How much memory reading a PyTorch checkpoint may make, checked against what the file declares
/// before any storage is inflated, and counted while tensors are read. A `torch.save` file stores
/// its storages uncompressed (they are used in place from the mapped file), so memory is made only
/// for deflated storages (a re-zipped checkpoint), strided views and bfloat16 widening.
public struct PyTorchLimits: Sendable, Equatable {
    /// Bytes the deflated storages may declare, over the whole file's size. Deflate reaches 1032:1 on
    /// one entry (and a zip's entries may share compressed bytes), so a few MB can declare many GB;
    /// trained or random float weights deflate by about 1.1:1, and even a checkpoint mostly of zeros
    /// stays far below this.
    public var maximumExpansion = 64
    /// Bytes a reading may make in all (inflated storages, strided copies, widened bfloat16), as a
    /// multiple of the bytes its storages declare: room for every tensor to be copied several times.
    public var memoryAllowance = 4

    public init() {}

    public static let `default` = PyTorchLimits()
}
