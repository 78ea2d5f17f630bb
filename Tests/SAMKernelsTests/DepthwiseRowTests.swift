import CVectorMath
import SAMTestSupport
import Testing

/// `sam_depthwise3x3_row_avx512`, `Kernels.depthwise3x3Row` on sixteen lanes: the loop's multiplies and
/// adds in its order, so every output has the loop's bits, at strides 1 and 2, every tail length and
/// column range, with the reads kept inside the rows (the rows end where their last tap does).
@Suite("Depthwise rows on sixteen lanes")
struct DepthwiseRowTests {
    /// The loop's recipe for one output (unfused: Swift does not contract a * b + c).
    static func recipe(_ rows: [[Float]], _ ix: Int, _ k: [Float], _ bias: Float) -> Float {
        var sum = bias
        for r in 0..<3 { sum += k[3 * r] * rows[r][ix] + k[3 * r + 1] * rows[r][ix + 1] + k[3 * r + 2] * rows[r][ix + 2] }
        return sum
    }

    @Test("the same bits as the loop", arguments: [1, 2])
    func sameBits(stride: Int) throws {
        guard sam_vector_math_has_avx512() != 0 else { return }  // nothing to compare on this CPU
        var rng = SplitMix64(seed: UInt64(stride))
        func random() -> Float { Float(Double(rng.next() % 2_000_001) / 1e6 - 1) }
        let k = (0..<9).map { _ in random() }, bias = random()
        var checked = 0
        for outputs in [1, 2, 7, 15, 16, 17, 31, 32, 33, 64, 100] {
            for padding in [0, 1] {
                // Output ox reads columns ox * stride - padding ... + 2: the first output whose taps start at
                // or after column 0 is `first`; each row ends at the last output's last tap.
                let first = padding, end = first + outputs
                let width = (end - 1) * stride - padding + 3
                let rows = (0..<3).map { _ in (0..<width).map { _ in random() } }
                var out = [Float](repeating: .nan, count: end + 3)
                // Each row its own allocation, exactly `width` long, so a read past it would not pass unnoticed
                // under the address sanitizer (make test-asan).
                let pointers = rows.map { row -> UnsafeMutablePointer<Float> in
                    let p = UnsafeMutablePointer<Float>.allocate(capacity: width)
                    p.initialize(from: row, count: width)
                    return p
                }
                defer { pointers.forEach { $0.deallocate() } }
                sam_depthwise3x3_row_avx512(pointers[0], pointers[1], pointers[2], &out, Int64(first), Int64(end), Int64(stride),
                                            Int64(padding), k, bias)
                for ox in 0..<(end + 3) {
                    if ox < first || ox >= end {
                        #expect(out[ox].isNaN, "stride \(stride), \(outputs) outputs: column \(ox) written")
                        continue
                    }
                    let expected = Self.recipe(rows, ox * stride - padding, k, bias)
                    #expect(out[ox].bitPattern == expected.bitPattern, "stride \(stride), \(outputs) outputs, output \(ox)")
                    checked += 1
                }
            }
        }
        #expect(checked > 600)
    }
}
