import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

@Suite("Hiera's stage transition window by window", .enabled(if: Kernels.panelAttentionAvailable, "the panel product needs AVX-512"))
struct PooledWindowAttentionTests {
    /// (batch, height, width, window, stride, channels, dimOut, heads): SAM 2.1 tiny's first
    /// transition in small (8-token windows, two heads), grids that pad their last windows (as 64x64
    /// in windows of 14 does), stride 3, a single head, a batch of two.
    static let shapes: [(Int, Int, Int, Int, Int, Int, Int, Int)] = [
        (1, 16, 16, 8, 2, 24, 48, 2), (1, 10, 13, 4, 2, 16, 32, 4), (2, 9, 9, 6, 3, 8, 24, 1), (1, 14, 14, 14, 2, 12, 20, 2),
    ]

    @Test("the same bits as qkv, q pooling, attention and the pooled shortcut run apart", arguments: shapes)
    func matchesLayersApart(batch: Int, height: Int, width: Int, window: Int, stride: Int, channels: Int, dimOut: Int, heads: Int) {
        var rng = SplitMix64(seed: 77)
        let normed = randomTensor([batch, height * width, channels], using: &rng)
        let qkvWeight = randomTensor([3 * dimOut, channels], using: &rng), qkvBias = randomTensor([3 * dimOut], using: &rng)
        let projection = randomTensor([dimOut, channels], using: &rng), projectionBias = randomTensor([dimOut], using: &rng)
        let scale = 1 / Float(dimOut / heads).squareRoot()
        guard let fused = Kernels.pooledWindowAttention(normed, height: height, width: width, window: window, stride: stride,
                                                        qkv: WeightTensor(qkvWeight), qkvBias: qkvBias,
                                                        shortcutProjection: WeightTensor(projection), shortcutBias: projectionBias,
                                                        heads: heads, scale: scale) else {
            Issue.record("the fused path did not run on a CPU with the panel product")
            return
        }
        // Layer by layer: upstream's zero-padded window partition, qkv, pooled queries, attention.
        let windows = Self.partition(normed, height: height, width: width, window: window)
        let packed = Kernels.linear(windows, weight: WeightTensor(qkvWeight), bias: qkvBias)
        let queries = Kernels.maxPoolTokens(packed, height: window, width: window, stride: stride, channels: 0..<dimOut)
        let attended = Kernels.attention(q: queries, keysAndValuesOf: packed, heads: heads, scale: scale)
        let shortcut = Kernels.maxPoolTokens(Kernels.linear(normed, weight: WeightTensor(projection), bias: projectionBias),
                                             height: height, width: width, stride: stride)
        #expect(fused.attended.shape == attended.shape && fused.shortcut.shape == shortcut.shape)
        #expect(Self.differing(fused.attended, attended) == 0)
        #expect(Self.differing(fused.shortcut, shortcut) == 0)
    }

    @Test("left to the layers when the products are not float32 panels")
    func declinesOtherProducts() throws {
        var rng = SplitMix64(seed: 78)
        let normed = randomTensor([1, 64, 8], using: &rng)
        let qkv = WeightTensor(randomTensor([48, 8], using: &rng)), projection = WeightTensor(randomTensor([16, 8], using: &rng))
        func fused() -> Bool {
            Kernels.pooledWindowAttention(normed, height: 8, width: 8, window: 4, stride: 2, qkv: qkv, qkvBias: FloatTensor(zeros: [48]),
                                          shortcutProjection: projection, shortcutBias: FloatTensor(zeros: [16]), heads: 1,
                                          scale: 0.25) != nil
        }
        #expect(fused())
        #expect(try !Kernels.withFloat32LinearKernel(.blas) { fused() })
        if Kernels.bfloat16Available {
            #expect(try !Kernels.withLinearPrecision(.bfloat16) { fused() })
        }
    }

    /// How many elements differ in their bits (NaN included) or in count.
    static func differing(_ a: FloatTensor, _ b: FloatTensor) -> Int {
        zip(a.data, b.data).filter { $0.bitPattern != $1.bitPattern }.count + abs(a.count - b.count)
    }

    /// x [B, H*W, C] -> [B * windows, window², C], zero tokens past the grid (upstream's window_partition).
    static func partition(_ x: FloatTensor, height: Int, width: Int, window: Int) -> FloatTensor {
        let batch = x.shape[0], channels = x.shape[2]
        let rows = (height + window - 1) / window, columns = (width + window - 1) / window
        var data: [Float] = []
        for b in 0..<batch {
            for wr in 0..<rows {
                for wc in 0..<columns {
                    for i in 0..<window {
                        for j in 0..<window {
                            let y = wr * window + i, xx = wc * window + j
                            for c in 0..<channels {
                                data.append(y < height && xx < width ? x.data[((b * height + y) * width + xx) * channels + c] : 0)
                            }
                        }
                    }
                }
            }
        }
        return FloatTensor(shape: [batch * rows * columns, window * window, channels], data: data)
    }
}
