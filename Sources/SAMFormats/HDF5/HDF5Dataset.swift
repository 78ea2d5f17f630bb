import SAMTensor

/// One dataset of an HDF5 file, as listed before its data is read.
public struct HDF5Dataset: Sendable, Equatable {
    /// The HDF5 path, e.g. `/image_encoder/layers/0/...` or `/image_encoder.layers.0.blocks.0.conv1.bn.running_var`.
    public let path: String
    /// The state-dict key: the path without its leading `/`, group separators turned into dots,
    /// so flat dotted files and nested-group files give the same names.
    public let key: String
    public let dtype: DType
    /// Empty for scalars.
    public let shape: [Int]
    /// Attributes rendered as text (numbers or strings), by name.
    public let attributes: [String: String]
    /// How its bytes are kept in the file (checked while listing; read only by `HDF5File.tensor`).
    public let storage: HDF5Storage

    static func key(forPath path: String) -> String {
        String(path.drop(while: { $0 == "/" })).replacingSlashesWithDots()
    }
}

extension String {
    func replacingSlashesWithDots() -> String { String(map { $0 == "/" ? "." : $0 }) }
}
