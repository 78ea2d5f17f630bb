import SAMFiles
import SAMTensor

/// One canonical tensor and where it came from. A large tensor that can be made again from its
/// file is not held: `read()` makes it again (the same bytes every time), so a conversion holds
/// one tensor at a time, not the model. Its NaN and infinity counts and its checksum are taken when
/// it is first made.
public struct ImportedTensor: Sendable {
    /// Makes the tensor again from its file (read, narrowed, laid out as at import).
    public typealias Remake = @Sendable () throws(ImportError) -> Tensor

    /// Tensors smaller than this are held: remaking them would save little.
    public static let heldByteLimit = 1 << 20

    public let dtype: DType
    public let shape: [Int]
    public var origin: TensorOrigin
    /// Other inputs that supplied the same tensor (and agreed).
    public var alsoIn: [String] = []
    /// The exporter's own symmetric int8 scales, one per row of this (canonical) tensor, when it was
    /// stored as int8 codes with zero point 0 (onnxruntime's QInt8): `samconvert --dtype int8` keeps
    /// those codes and scales instead of rounding the dequantized values a second time.
    public var exporterInt8Scales: [Float]?
    /// NaN and infinite elements (zero for non-float dtypes).
    public let nonFinite: NonFiniteCount
    /// The CRC-32 of its bytes, what a file that stores it as it is records.
    public let crc32: UInt32
    private let source: Source

    private enum Source: Sendable {
        case held(Tensor)
        case remade(Remake)
    }

    /// Holds `tensor`; with `remake`, a tensor of `heldByteLimit` bytes or more is dropped and made again on `read()`.
    public init(tensor: Tensor, origin: TensorOrigin, remake: Remake? = nil) {
        dtype = tensor.dtype
        shape = tensor.shape
        self.origin = origin
        nonFinite = NonFiniteCount(tensor)
        crc32 = CRC32.checksum(tensor.storage.bytes)
        if let remake, tensor.byteCount >= Self.heldByteLimit {
            source = .remade(remake)
        } else {
            source = .held(tensor)
        }
    }

    /// The tensor: held, or made again from its file (which may fail if the file changed or went away).
    public func read() throws(ImportError) -> Tensor {
        switch source {
        case .held(let tensor): tensor
        case .remade(let remake): try remake()
        }
    }

    /// `read()` for callers that have nothing to do with a failure (tests, tools on files just
    /// imported); traps, naming the tensor, if its file can no longer be read.
    public var tensor: Tensor {
        do { return try read() } catch { preconditionFailure("\(origin): cannot read again: \(error)") }
    }

    /// Whether the bytes are held in memory (small or computed tensors) rather than made on demand.
    public var isHeld: Bool {
        if case .held = source { return true }
        return false
    }

    public var elementCount: Int { shape.reduce(1, *) }
    public var byteCount: Int { elementCount * dtype.byteSize }
}
