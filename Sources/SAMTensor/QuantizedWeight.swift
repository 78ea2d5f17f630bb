/// A weight stored as small integers with float scales (`samconvert --dtype int8|q4`): the matrix
/// of a linear layer, `[out, in]`, or any weight read as `[out, inner]` rows (`inner` = the product
/// of the other dimensions).
///
/// - `int8`: one float32 scale per output row; element = code × scale, codes in -127...127
///   (symmetric, per output channel; -128 too where an export's own codes are kept).
/// - `int4`: one float16 scale per group of 32 consecutive elements of a row; element =
///   (nibble - 8) × scale, nibbles 0...15 (as ggml's q4_0). `inner` is a multiple of 32.
///
/// The bytes (one `.samw` table row, [samw-format.md](../../docs/samw-format.md)): the scales, then
/// the codes from the next multiple of 64 bytes. int4 packs two codes per byte, the even element
/// in the low nibble.
public struct QuantizedWeight: Sendable {
    /// How codes and scales are stored; the raw value is the dtype name a `.samw` table uses.
    public enum Scheme: String, Sendable, CaseIterable {
        /// One signed byte per element, one float32 scale per output row.
        case int8 = "q8"
        /// Four bits per element, one float16 scale per 32 consecutive elements of a row.
        case int4 = "q4"

        /// Elements per scale along a row (`int8`: the whole row).
        package static let int4GroupSize = 32
    }

    /// The scheme the codes and scales are stored in.
    public let scheme: Scheme
    /// The weight's logical shape, `[out, ...]`: the first dimension counts the rows.
    public let shape: [Int]
    /// Scales then codes, laid out as `layout(scheme, shape)` says.
    package let storage: TensorStorage

    /// Where the parts of a quantized row lie, in bytes from its start.
    package struct Layout: Equatable, Sendable {
        package let rows: Int, inner: Int
        package let scaleBytes: Int, codesOffset: Int, codeBytes: Int
        package var byteCount: Int { codesOffset + codeBytes }
    }

    /// Why a shape cannot be stored in a scheme.
    package struct ShapeRefused: Error, CustomStringConvertible {
        package let description: String
    }

    /// The layout of `shape` in `scheme`, or why it has none: a shape of rank 2 or more with no
    /// zero dimension, and for `int4` rows whose length is a multiple of 32.
    package static func layout(_ scheme: Scheme, shape: [Int]) throws(ShapeRefused) -> Layout {
        guard shape.count >= 2, shape.allSatisfy({ $0 > 0 }) else {
            throw ShapeRefused(description: "\(scheme.rawValue) stores weights of rank 2 or more without empty dimensions, not \(shape)")
        }
        let count: Int
        do { count = try Shape.elementCount(shape) } catch { throw ShapeRefused(description: "\(error)") }
        // Codes are at most one byte each: a shape whose count fits is safe to size in bytes.
        guard count <= Int.max / 8 else { throw ShapeRefused(description: "\(shape) is too large") }
        let rows = shape[0], inner = count / rows
        switch scheme {
        case .int8:
            let scaleBytes = rows * 4
            return Layout(rows: rows, inner: inner, scaleBytes: scaleBytes, codesOffset: aligned(scaleBytes), codeBytes: count)
        case .int4:
            guard inner % Scheme.int4GroupSize == 0 else {
                throw ShapeRefused(description: "q4 needs rows of a multiple of \(Scheme.int4GroupSize) elements; \(shape) has rows of \(inner)")
            }
            let scaleBytes = rows * (inner / Scheme.int4GroupSize) * 2
            return Layout(rows: rows, inner: inner, scaleBytes: scaleBytes, codesOffset: aligned(scaleBytes), codeBytes: count / 2)
        }
    }

    private static func aligned(_ bytes: Int) -> Int { (bytes + 63) / 64 * 64 }

    /// Wraps `storage`, which must hold `layout(scheme, shape).byteCount` bytes (the `.samw` reader
    /// checks its table rows against the layout before building one).
    package init(scheme: Scheme, shape: [Int], checkedStorage storage: TensorStorage) {
        // An internal invariant (callers check user input first), as `Tensor(checkedStorage:)`'s.
        guard let layout = try? Self.layout(scheme, shape: shape), layout.byteCount == storage.bytes.count else {
            preconditionFailure("storage of \(storage.bytes.count) bytes is not a \(scheme.rawValue) \(shape)")
        }
        self.scheme = scheme
        self.shape = shape
        self.storage = storage
        self.layout = layout
    }

    /// Where the scales and codes lie, fixed by `scheme` and `shape`.
    package let layout: Layout
    package var count: Int { layout.rows * layout.inner }

    /// The scales' and the codes' bytes.
    package var scaleBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage.bytes[0..<layout.scaleBytes]) }
    package var codeBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage.bytes[layout.codesOffset..<layout.byteCount]) }

    /// The scale of output row `row` (`int8`).
    package func rowScale(_ row: Int) -> Float {
        Float(bitPattern: UInt32(littleEndian: storage.bytes.loadUnaligned(fromByteOffset: row * 4, as: UInt32.self)))
    }

    /// The index of the first scale under which an element is not a finite float32 (a NaN or
    /// infinite scale, or an int8 scale so large that code × scale overflows), nil when there is
    /// none. samconvert never writes one; the `.samw` reader refuses a row that has one, naming it.
    package var firstNonFiniteScale: (index: Int, scale: Float)? {
        switch scheme {
        case .int8:
            // |code| is at most 128 (an export's -128 kept).
            for row in 0..<layout.rows where !(rowScale(row).magnitude * 128).isFinite { return (row, rowScale(row)) }
        case .int4:
            // |nibble - 8| is at most 8, and 8 × the largest float16 is finite: only the scale itself can fail.
            let scales = scaleBytes
            for group in 0..<(layout.scaleBytes / 2) {
                let scale = Half.toFloat(UInt16(littleEndian: scales.loadUnaligned(fromByteOffset: group * 2, as: UInt16.self)))
                if !scale.isFinite { return (group, scale) }
            }
        }
        return nil
    }

    /// Every element as float32, C order, into `out` (`count` floats): exact, code × scale.
    package func dequantize(into out: UnsafeMutableBufferPointer<Float>) {
        precondition(out.count == count, "dequantize: \(out.count) floats for \(count) elements")
        let codes = codeBytes
        switch scheme {
        case .int8:
            for row in 0..<layout.rows {
                let scale = rowScale(row), base = row * layout.inner
                for column in 0..<layout.inner {
                    out[base + column] = Float(Int8(bitPattern: codes[base + column])) * scale
                }
            }
        case .int4:
            let groups = layout.inner / Scheme.int4GroupSize
            let scales = scaleBytes
            for group in 0..<(layout.rows * groups) {
                let scale = Half.toFloat(UInt16(littleEndian: scales.loadUnaligned(fromByteOffset: group * 2, as: UInt16.self)))
                let first = group * Scheme.int4GroupSize
                for pair in 0..<(Scheme.int4GroupSize / 2) {
                    let byte = codes[first / 2 + pair]
                    out[first + 2 * pair] = Float(Int(byte & 0x0F) - 8) * scale
                    out[first + 2 * pair + 1] = Float(Int(byte >> 4) - 8) * scale
                }
            }
        }
    }

    /// An owned float32 copy of every element.
    package func floats() -> [Float] {
        [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
            dequantize(into: buffer)
            initialized = count
        }
    }
}
