import SAMTensor

/// One tensor as the writer lays it out: a plain tensor, or a quantized weight (dtype `q8`/`q4`,
/// which makes the file format version 2). Its bytes are held, or made when the writer needs them
/// (`init(name:dtype:shape:...)`), so a file larger than memory is written one row at a time.
package struct SAMWRow: Sendable {
    /// Makes the row's bytes; every call must give the same bytes (their CRC-32 is given beforehand).
    package typealias Make = @Sendable () throws(FormatError) -> TensorStorage

    /// The tensor's name in the file (a dotted state-dict path).
    package let name: String
    package let dtype: String
    package let shape: [Int]
    package let byteCount: Int
    package let isQuantized: Bool
    /// The CRC-32 of the bytes when they are made on demand (the writer computes it for held ones).
    package let crc32: UInt32?
    private let source: Source

    private enum Source: Sendable {
        case held(TensorStorage)
        case made(Make)
    }

    /// A plain tensor, its bytes held as they are.
    package init(name: String, tensor: Tensor) {
        self.name = name
        dtype = SAMWLayout.dtypeName(tensor.dtype)
        shape = tensor.shape
        byteCount = tensor.byteCount
        isQuantized = false
        crc32 = nil
        source = .held(tensor.storage)
    }

    package init(name: String, quantized weight: QuantizedWeight) {
        self.name = name
        dtype = weight.scheme.rawValue
        shape = weight.shape
        byteCount = weight.storage.bytes.count
        isQuantized = true
        crc32 = nil
        source = .held(weight.storage)
    }

    /// A row whose `byteCount` bytes, with checksum `crc32`, `make` makes when they are written.
    package init(name: String, dtype: String, shape: [Int], byteCount: Int, isQuantized: Bool, crc32: UInt32,
                make: @escaping Make) {
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.byteCount = byteCount
        self.isQuantized = isQuantized
        self.crc32 = crc32
        source = .made(make)
    }

    /// The bytes: held, or made now.
    package func bytes() throws(FormatError) -> TensorStorage {
        switch source {
        case .held(let storage): storage
        case .made(let make): try make()
        }
    }

    /// The held bytes, nil for a row made on demand.
    var heldBytes: TensorStorage? {
        if case .held(let storage) = source { return storage }
        return nil
    }
}
