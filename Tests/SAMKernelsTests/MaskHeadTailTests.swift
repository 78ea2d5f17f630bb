import CVectorMath
import SAMTestSupport
import Testing

/// `sam_mask_head_tail_avx512`, the mask head's scatter, GELU and hypernetwork product in one pass,
/// against the same steps done one by one: the taps scattered to their output pixels with the bias,
/// `sam_gelu_avx512` on the upscaled map, then each logit's fused multiply-add chain over channels.
@Suite("Mask head tail", .enabled(if: sam_vector_math_has_avx512() != 0, "this CPU has no AVX-512"))
struct MaskHeadTailTests {
    /// (middle rows, middle width, channels, masks): MobileSAM's band (2 x 128, 32 channels, 4
    /// masks), and others within the kernel's limits.
    static let shapes: [(Int, Int, Int, Int)] = [(2, 128, 32, 4), (1, 8, 16, 1), (3, 24, 48, 8), (2, 16, 32, 5)]

    @Test("equals scatter, bias, GELU and the chained products, bit for bit", arguments: shapes)
    func equalsStepByStep(_ shape: (Int, Int, Int, Int)) {
        let (middleRows, middleWidth, channels, masks) = shape
        var rng = SplitMix64(seed: UInt64(middleRows * 1000 + middleWidth * 10 + channels))
        let products = (0..<(middleRows * middleWidth * 4 * channels)).map { _ in Float.random(in: -4...4, using: &rng) }
        let bias = (0..<channels).map { _ in Float.random(in: -1...1, using: &rng) }
        let hyper = (0..<(masks * channels)).map { _ in Float.random(in: -1...1, using: &rng) }
        let (outRows, outWidth) = (2 * middleRows, 2 * middleWidth)
        // The output rows are padded, and the masks a plane and a row apart, to check the strides.
        let outStride = outWidth + 16, plane = outRows * outStride + 32
        var out = [Float](repeating: .nan, count: masks * plane)
        sam_mask_head_tail_avx512(products, Int64(middleRows), Int64(middleWidth), Int64(channels), bias, hyper,
                                  Int64(masks), &out, Int64(outStride), Int64(plane))

        var upscaled = [Float](repeating: 0, count: outRows * outWidth * channels)
        for y in 0..<middleRows {
            for x in 0..<middleWidth {
                for tap in 0..<4 {
                    let (i, j) = (tap / 2, tap % 2)
                    for c in 0..<channels {
                        upscaled[((2 * y + i) * outWidth + 2 * x + j) * channels + c] =
                            products[((y * middleWidth + x) * 4 + tap) * channels + c] + bias[c]
                    }
                }
            }
        }
        sam_gelu_avx512(&upscaled, Int64(upscaled.count))
        var differing = 0
        for m in 0..<masks {
            for pixel in 0..<(outRows * outWidth) {
                var sum: Float = 0
                for c in 0..<channels { sum = sum.addingProduct(hyper[m * channels + c], upscaled[pixel * channels + c]) }
                let (row, column) = (pixel / outWidth, pixel % outWidth)
                if out[m * plane + row * outStride + column].bitPattern != sum.bitPattern { differing += 1 }
            }
        }
        #expect(differing == 0, "\(shape): \(differing) logits differ")
        // Nothing outside the masks' rows is written.
        let padding = (0..<masks).flatMap { m in (0..<outRows).flatMap { r in (outWidth..<outStride).map { m * plane + r * outStride + $0 } } }
        #expect(padding.allSatisfy { out[$0].isNaN })
    }
}
