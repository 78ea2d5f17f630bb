/// A storage as a persistent id names it: `('storage', torch.FloatStorage, key, location, numel)`.
public struct TorchStorageReference: Sendable, Equatable {
    /// The storage's name in the archive (`<archive>/data/<key>`).
    public let key: String
    public let elementType: CheckpointElementType
    /// Elements the pickle says the storage holds (checked against the archive entry).
    public let elementCount: Int
    /// The device it was saved from (`cpu`, `cuda:0`); the bytes are the same either way.
    public let location: String
}
