/// Why a shape cannot describe a tensor.
public enum ShapeError: Error, Equatable, CustomStringConvertible {
    /// The shape has a dimension below zero.
    case negativeDimension([Int])
    /// The product of the dimensions does not fit an `Int`.
    case elementCountOverflow([Int])

    /// A one-line message naming the shape.
    public var description: String {
        switch self {
        case .negativeDimension(let dims): "shape \(dims) has a negative dimension"
        case .elementCountOverflow(let dims): "shape \(dims) has more elements than can be addressed"
        }
    }
}

package enum Shape {
    /// Product of the dimensions, refusing negative dims and products that overflow.
    package static func elementCount(_ dims: [Int]) throws(ShapeError) -> Int {
        var count = 1
        for dim in dims {
            if dim < 0 { throw .negativeDimension(dims) }
            let (product, overflow) = count.multipliedReportingOverflow(by: dim)
            if overflow { throw .elementCountOverflow(dims) }
            count = product
        }
        return count
    }

    /// Byte size of a tensor of `dims` elements of `dtype`, with the same checks.
    package static func byteCount(_ dims: [Int], _ dtype: DType) throws(ShapeError) -> Int {
        let (bytes, overflow) = try elementCount(dims).multipliedReportingOverflow(by: dtype.byteSize)
        if overflow { throw .elementCountOverflow(dims) }
        return bytes
    }

    /// `[1, 256, 64, 64]` style text used in every message.
    package static func text(_ dims: [Int]) -> String { "[" + dims.map(String.init).joined(separator: ",") + "]" }
}
