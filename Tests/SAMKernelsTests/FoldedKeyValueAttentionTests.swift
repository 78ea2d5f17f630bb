import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

@Suite("Attention with the key and value projections folded into the queries")
struct FoldedKeyValueAttentionTests {
    /// (queries, tokens, token width, heads, head dim, value head dim): a click on MobileSAM's
    /// decoder (7 queries, 8 heads of 16, 256-wide tokens; 600 tokens stand in for 4096), one
    /// query, value heads narrower than key heads, and widths that are not multiples of 8.
    static let shapes = [(7, 600, 256, 8, 16, 16), (1, 37, 20, 2, 8, 8), (3, 129, 13, 3, 5, 2)]

    /// The kernel's order in float64 with its float32 rounding tracked: folded queries
    /// scale·q_h W_k,h, scores against the key tokens, softmax, the weighted sum of the value
    /// tokens, then W_v,h and b_v,h.
    static func foldedReference(q: FloatTensor, x: FloatTensor, xv: FloatTensor, keyWeight: FloatTensor,
                                valueWeight: FloatTensor, valueBias: FloatTensor, heads: Int, scale: Float) -> [Expected] {
        let (queries, width) = (q.shape[1], q.shape[2])
        let (tokens, tokenWidth) = (x.shape[1], x.shape[2])
        let valueWidth = valueWeight.shape[0]
        let (d, dv) = (width / heads, valueWidth / heads)
        var out = [Expected](repeating: .zero, count: queries * valueWidth)
        for h in 0..<heads {
            for t in 0..<queries {
                var folded = [Expected](repeating: .zero, count: tokenWidth)
                for e in 0..<tokenWidth {
                    var sum = Expected.zero
                    for i in 0..<d {
                        sum += Expected(exact: q.data[t * width + h * d + i]) * Expected(exact: keyWeight.data[(h * d + i) * tokenWidth + e])
                    }
                    folded[e] = sum * Expected(exact: scale)
                }
                var scores = [Expected](repeating: .zero, count: tokens)
                for j in 0..<tokens {
                    for e in 0..<tokenWidth { scores[j] += folded[e] * Expected(exact: x.data[j * tokenWidth + e]) }
                }
                let maxScore = Expected(exact: scores.map(\.value).max()!)
                let exps = scores.map { ($0 - maxScore).exp(withinULPs: 2) }
                let total = exps.reduce(Expected.zero, +)
                var mixed = [Expected](repeating: .zero, count: tokenWidth)
                for e in 0..<tokenWidth {
                    for j in 0..<tokens { mixed[e] += exps[j] / total * Expected(exact: xv.data[j * tokenWidth + e]) }
                }
                for o in 0..<dv {
                    var sum = Expected(exact: valueBias.data[h * dv + o])
                    for e in 0..<tokenWidth { sum += mixed[e] * Expected(exact: valueWeight.data[(h * dv + o) * tokenWidth + e]) }
                    out[t * valueWidth + h * dv + o] = sum
                }
            }
        }
        return out
    }

    /// Seeded random operands for a shape; the key bias is what the folded order drops.
    struct Case {
        let q: FloatTensor, x: FloatTensor, xv: FloatTensor, keyWeight: FloatTensor, keyBias: FloatTensor
        let valueWeight: FloatTensor, valueBias: FloatTensor, heads: Int, scale: Float

        init(_ s: (Int, Int, Int, Int, Int, Int), seed: UInt64) {
            let (queries, tokens, tokenWidth, heads, headDim, valueHeadDim) = s
            var rng = SplitMix64(seed: seed)
            q = randomTensor([1, queries, heads * headDim], using: &rng)
            x = randomTensor([1, tokens, tokenWidth], using: &rng)
            xv = randomTensor([1, tokens, tokenWidth], using: &rng)
            keyWeight = randomTensor([heads * headDim, tokenWidth], using: &rng)
            keyBias = randomTensor([heads * headDim], in: -2...2, using: &rng)
            valueWeight = randomTensor([heads * valueHeadDim, tokenWidth], using: &rng)
            valueBias = randomTensor([heads * valueHeadDim], using: &rng)
            self.heads = heads
            scale = 1.5 / Float(headDim).squareRoot()
        }

        var foldedReference: [Expected] {
            FoldedKeyValueAttentionTests.foldedReference(q: q, x: x, xv: xv, keyWeight: keyWeight, valueWeight: valueWeight,
                                                         valueBias: valueBias, heads: heads, scale: scale)
        }
    }

    @Test("matches the folded order's float64 value within its rounding", arguments: shapes)
    func matchesReference(_ s: (Int, Int, Int, Int, Int, Int)) {
        let c = Case(s, seed: UInt64(s.1 * 13 + s.0))
        let out = Kernels.attentionFoldingKeyValueProjections(queries: c.q, keys: c.x, values: c.xv, keyWeight: c.keyWeight,
                                                              valueWeight: c.valueWeight, valueBias: c.valueBias,
                                                              heads: c.heads, scale: c.scale)
        expectClose(out, c.foldedReference, shape: [1, s.0, s.3 * s.5], "folded attention \(s)")
    }

    /// The identity the kernel rests on, in float64: the projected path (k_proj with its bias,
    /// v_proj, attention) and the folded order give the same function.
    @Test("the folded order is the projected attention, key bias and all", arguments: shapes)
    func foldedOrderIsProjectedAttention(_ s: (Int, Int, Int, Int, Int, Int)) {
        let c = Case(s, seed: UInt64(s.1 * 7 + s.3))
        let keys = LinearTests.reference(c.x, c.keyWeight, c.keyBias), values = LinearTests.reference(c.xv, c.valueWeight, c.valueBias)
        let projected = AttentionTests.reference(q: c.q, k: keys, keyShape: [1, s.1, c.keyWeight.shape[0]],
                                                 v: values, valueShape: [1, s.1, c.valueWeight.shape[0]],
                                                 heads: c.heads, scale: c.scale, bias: nil)
        let worst = zip(projected, c.foldedReference).map { abs($0.value - $1.value) / max(1, abs($0.value)) }.max() ?? .infinity
        #expect(worst < 1e-12, "largest relative difference \(worst)")
    }

    @Test("pays only while heads times queries stay below the projected width")
    func paysBelowProjectedWidth() {
        // MobileSAM's decoder: 8 heads, 128 projected dims: a click (7 tokens) or box (7) folds, 16 points (22) do not.
        #expect(Kernels.foldingKeyValueProjectionsPays(queryLength: 7, heads: 8, projectedWidth: 128))
        #expect(Kernels.foldingKeyValueProjectionsPays(queryLength: 15, heads: 8, projectedWidth: 128))
        #expect(!Kernels.foldingKeyValueProjectionsPays(queryLength: 16, heads: 8, projectedWidth: 128))
        #expect(!Kernels.foldingKeyValueProjectionsPays(queryLength: 22, heads: 8, projectedWidth: 128))
    }
}
