import SAMTensor

/// One tensor as the writer lays it out: a plain tensor, or a quantized weight (dtype `q8`/`q4`,
/// which makes the file format version 2).
public struct SAMWRow: Sendable {
    public let name: String
    public let dtype: String
    public let shape: [Int]
    public let storage: TensorStorage
    public let isQuantized: Bool

    public init(name: String, tensor: Tensor) {
        self.name = name
        dtype = SAMWLayout.dtypeName(tensor.dtype)
        shape = tensor.shape
        storage = tensor.storage
        isQuantized = false
    }

    public init(name: String, quantized weight: QuantizedWeight) {
        self.name = name
        dtype = weight.scheme.rawValue
        shape = weight.shape
        storage = weight.storage
        isQuantized = true
    }

    public var byteCount: Int { storage.bytes.count }
}
