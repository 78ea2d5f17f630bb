#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A typed, shaped, immutable block of little-endian elements, as the readers produce it.
/// Numeric code converts to `[Float]` (or `FloatTensor`) once, at the edge.
public struct Tensor: Sendable {
    /// The type of every element.
    public let dtype: DType
    /// Dimensions, outermost first (C order); `[]` is a scalar.
    public let shape: [Int]
    /// The elements' bytes: `elementCount` little-endian elements of `dtype`, C order.
    public let storage: TensorStorage

    /// Wraps `storage`, which must hold exactly `shape`'s elements of `dtype`.
    public init(dtype: DType, shape: [Int], storage: TensorStorage) throws(ShapeError) {
        let expected = try Shape.byteCount(shape, dtype)
        precondition(storage.bytes.count == expected, "storage holds \(storage.bytes.count) bytes, shape needs \(expected)")
        self.dtype = dtype
        self.shape = shape
        self.storage = storage
    }

    /// For code that has already checked `storage` against `shape` and `dtype` (a reader after its size
    /// checks, a layout rule building its own buffer): the precondition guards that internal invariant,
    /// never user input, which must be checked (and reported) before this is called.
    package init(dtype: DType, shape: [Int], checkedStorage storage: TensorStorage) {
        precondition((try? Shape.byteCount(shape, dtype)) == storage.bytes.count,
                     "storage of \(storage.bytes.count) bytes does not hold \(dtype) \(Shape.text(shape))")
        self.dtype = dtype
        self.shape = shape
        self.storage = storage
    }

    /// A float32 tensor holding a copy of `values`.
    public init(shape: [Int], floats values: [Float]) {
        precondition((try? Shape.elementCount(shape)) == values.count, "shape \(shape) does not match \(values.count) values")
        dtype = .float32
        self.shape = shape
        storage = values.withUnsafeBytes { TensorStorage(copying: $0) }
    }

    /// Number of elements (the product of `shape`).
    public var elementCount: Int { storage.bytes.count / dtype.byteSize }
    /// Size of the elements in bytes (`elementCount` × `dtype.byteSize`).
    public var byteCount: Int { storage.bytes.count }

    /// Element `index` (flat, C order) widened to Double; bool is 0 or 1.
    @inline(__always)
    public func value(at index: Int) -> Double {
        let bytes = storage.bytes
        let offset = index * dtype.byteSize
        switch dtype {
        case .float32: return Double(bytes.loadUnaligned(fromByteOffset: offset, as: Float.self))
        case .float16: return Double(Half.toFloat(bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
        case .float64: return bytes.loadUnaligned(fromByteOffset: offset, as: Double.self)
        case .int64: return Double(bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
        case .int32: return Double(bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self))
        case .int8: return Double(Int8(bitPattern: bytes[offset]))
        case .uint8: return Double(bytes[offset])
        case .bool: return bytes[offset] != 0 ? 1 : 0
        }
    }

    /// All elements as Float. float32 is copied bit for bit; float16 widens exactly;
    /// float64 and 64-bit integers round to nearest.
    public func floats() -> [Float] {
        let count = elementCount
        if dtype == .float32 {
            return [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
                if count > 0 { UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: storage.bytes.baseAddress!, byteCount: count * 4) }
                initialized = count
            }
        }
        if dtype == .float16 {
            let bytes = storage.bytes
            return (0..<count).map { Half.toFloat(bytes.loadUnaligned(fromByteOffset: $0 * 2, as: UInt16.self)) }
        }
        return (0..<count).map { Float(value(at: $0)) }
    }

    /// All elements as Int64 (integers and bool exactly; floats truncated toward zero).
    package func int64s() -> [Int64] {
        if dtype == .int64 {
            let bytes = storage.bytes
            return (0..<elementCount).map { bytes.loadUnaligned(fromByteOffset: $0 * 8, as: Int64.self) }
        }
        return (0..<elementCount).map { Int64(value(at: $0)) }
    }

    /// The same bytes under `newShape`, which the caller has checked holds the same element count.
    package func reshaped(checked newShape: [Int]) -> Tensor {
        Tensor(dtype: dtype, shape: newShape, checkedStorage: storage)
    }

    /// A tensor with the same bytes viewed under another shape of equal element count.
    public func reshaped(_ newShape: [Int]) throws(ShapeError) -> Tensor {
        try Tensor(dtype: dtype, shape: newShape, storage: storage)
    }
}

extension Tensor {
    /// min, max and mean over all elements (NaN propagates to all three), for listings.
    package func summary() -> (min: Double, max: Double, mean: Double) {
        let count = elementCount
        if count == 0 { return (.nan, .nan, .nan) }
        var low = Double.infinity, high = -Double.infinity, sum = 0.0, sawNaN = false
        for index in 0..<count {
            let element = value(at: index)
            if element.isNaN { sawNaN = true; continue }
            low = Swift.min(low, element)
            high = Swift.max(high, element)
            sum += element
        }
        if sawNaN { return (.nan, .nan, .nan) }
        return (low, high, sum / Double(count))
    }

    /// True when both tensors have the same dtype, shape and bytes.
    package func isBitwiseEqual(to other: Tensor) -> Bool {
        guard dtype == other.dtype, shape == other.shape, storage.bytes.count == other.storage.bytes.count else { return false }
        guard let left = storage.bytes.baseAddress, let right = other.storage.bytes.baseAddress else { return true }
        return memcmp(left, right, storage.bytes.count) == 0
    }
}
