#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutable float32 activation in C order (NCHW for images, [tokens, channels] for sequences),
/// the working type of the runtime. Plain value semantics over a Swift array.
public struct FloatTensor: Sendable, Equatable {
    /// Dimensions, outermost first; their product is `data.count`.
    public var shape: [Int]
    /// The elements in C order (the last dimension varies fastest).
    public var data: [Float]

    /// Wraps `data` as a tensor of `shape`; traps when the counts differ.
    public init(shape: [Int], data: [Float]) {
        precondition(shape.reduce(1, *) == data.count, "shape \(shape) does not match \(data.count) values")
        self.shape = shape
        self.data = data
    }

    /// A tensor of `shape` holding zeros.
    public init(zeros shape: [Int]) {
        self.shape = shape
        data = [Float](repeating: 0, count: shape.reduce(1, *))
    }

    /// Converts any numeric tensor (see `Tensor.floats()`).
    public init(_ tensor: Tensor) {
        self.init(shape: tensor.shape, data: tensor.floats())
    }

    /// Number of elements (the product of `shape`).
    public var count: Int { data.count }

    /// The same elements under another shape of equal count.
    public func reshaped(_ newShape: [Int]) -> FloatTensor {
        FloatTensor(shape: newShape, data: data)
    }

    /// Same shape and the same bits in every element (unlike `==`, -0 differs from +0 and a NaN equals itself).
    package func isBitwiseEqual(to other: FloatTensor) -> Bool {
        guard shape == other.shape else { return false }
        // Tensors sharing their storage (copies of one tensor) are equal without reading it.
        return data.withUnsafeBytes { a in
            other.data.withUnsafeBytes { b in
                a.count == 0 || a.baseAddress == b.baseAddress || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
            }
        }
    }

    /// Back to a readers' `Tensor` (for writing `.npy`).
    public var tensor: Tensor { Tensor(shape: shape, floats: data) }
}
