extension QuantizedWeight {
    /// Why a weight was not quantized.
    package struct QuantizationRefused: Error, CustomStringConvertible {
        package let description: String
    }

    /// `floats` (C order, `shape`) quantized to `scheme`, rounding to nearest:
    /// - `int8`: per output row, scale = max |x| / 127, code = round(x / scale);
    /// - `int4`: per group of 32, d = the element of largest magnitude / -8 (rounded to float16),
    ///   nibble = clamp(round(x / d) + 8, 0, 15), so that element is exact (ggml's q4_0 rule).
    /// An all-zero row or group gets scale 0. Non-finite values are refused.
    ///
    /// `int8RowScales` (int8 only) gives each row's scale instead: an exporter's own (onnxruntime's
    /// QInt8), whose dequantized values this recovers the codes of exactly, -128 included.
    package init(quantizing floats: UnsafeBufferPointer<Float>, shape: [Int], scheme: Scheme,
                int8RowScales: [Float]? = nil) throws(QuantizationRefused) {
        let layout: Layout
        do { layout = try Self.layout(scheme, shape: shape) } catch { throw QuantizationRefused(description: error.description) }
        guard floats.count == layout.rows * layout.inner else {
            throw QuantizationRefused(description: "\(floats.count) values for shape \(shape)")
        }
        if let bad = floats.firstIndex(where: { !$0.isFinite }) {
            throw QuantizationRefused(description: "element \(bad) is \(floats[bad]); only finite weights can be quantized")
        }
        let storage = TensorStorage(zeroedByteCount: layout.byteCount)
        let raw = UnsafeMutableRawPointer(mutating: storage.bytes.baseAddress!)
        let codes = raw + layout.codesOffset
        if let int8RowScales {
            guard scheme == .int8, int8RowScales.count == layout.rows, int8RowScales.allSatisfy({ $0.isFinite && $0 >= 0 }) else {
                throw QuantizationRefused(description: "\(int8RowScales.count) row scales for \(scheme.rawValue) \(shape)")
            }
        }
        switch scheme {
        case .int8:
            for row in 0..<layout.rows {
                let values = UnsafeBufferPointer(rebasing: floats[(row * layout.inner)..<((row + 1) * layout.inner)])
                let largest = values.reduce(Float(0)) { max($0, abs($1)) }
                let scale = int8RowScales?[row] ?? largest / 127
                let lowest: Float = int8RowScales == nil ? -127 : -128
                raw.storeBytes(of: scale.bitPattern.littleEndian, toByteOffset: row * 4, as: UInt32.self)
                guard scale > 0 else { continue }
                for (column, value) in values.enumerated() {
                    let code = min(127, max(lowest, (value / scale).rounded(.toNearestOrEven)))
                    codes.storeBytes(of: Int8(code), toByteOffset: row * layout.inner + column, as: Int8.self)
                }
            }
        case .int4:
            let size = Scheme.int4GroupSize
            for group in 0..<(floats.count / size) {
                let values = UnsafeBufferPointer(rebasing: floats[(group * size)..<((group + 1) * size)])
                let extreme = values.max { abs($0) < abs($1) } ?? 0
                let half = Half.fromFloat(extreme / -8)
                raw.storeBytes(of: half.littleEndian, toByteOffset: group * 2, as: UInt16.self)
                let d = Half.toFloat(half)
                guard d.isFinite else {
                    throw QuantizationRefused(description: "element \(group * size) onwards: \(extreme) is beyond float16's range for a q4 scale")
                }
                for pair in 0..<(size / 2) {
                    func nibble(_ value: Float) -> UInt8 {
                        guard d != 0 else { return 8 }
                        return UInt8(min(15, max(0, (value / d).rounded(.toNearestOrEven) + 8)))
                    }
                    let byte = nibble(values[2 * pair]) | nibble(values[2 * pair + 1]) << 4
                    codes.storeBytes(of: byte, toByteOffset: group * size / 2 + pair, as: UInt8.self)
                }
            }
        }
        self.init(scheme: scheme, shape: shape, checkedStorage: storage)
    }
}
