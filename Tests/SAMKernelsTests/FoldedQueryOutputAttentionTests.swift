import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

@Suite("Attention with the query and output projections folded into the keys and values")
struct FoldedQueryOutputAttentionTests {
    /// (query tokens, keys, token width, heads, head dim, value head dim): MobileSAM's
    /// image-to-token attention for a click (7 prompt tokens, 8 heads of 16, 256-wide tokens; 300
    /// image tokens stand in for 4096, more than one 256-row tile), a single key, 8 keys (no
    /// padding), and widths that are not multiples of 8.
    static let shapes = [(300, 7, 256, 8, 16, 16), (5, 1, 20, 2, 8, 8), (261, 8, 24, 2, 4, 4), (9, 3, 13, 3, 5, 2)]

    struct Case {
        let x: FloatTensor, keys: FloatTensor, values: FloatTensor, queryWeight: FloatTensor, queryBias: FloatTensor
        let outputWeight: FloatTensor, outputBias: FloatTensor, residual: FloatTensor, heads: Int, scale: Float

        init(_ s: (Int, Int, Int, Int, Int, Int), seed: UInt64) {
            let (queries, keyCount, tokenWidth, heads, headDim, valueHeadDim) = s
            var rng = SplitMix64(seed: seed)
            x = randomTensor([1, queries, tokenWidth], using: &rng)
            keys = randomTensor([1, keyCount, heads * headDim], using: &rng)
            values = randomTensor([1, keyCount, heads * valueHeadDim], using: &rng)
            queryWeight = randomTensor([heads * headDim, tokenWidth], using: &rng)
            queryBias = randomTensor([heads * headDim], in: -2...2, using: &rng)
            outputWeight = randomTensor([tokenWidth, heads * valueHeadDim], using: &rng)
            outputBias = randomTensor([tokenWidth], using: &rng)
            residual = randomTensor([1, queries, tokenWidth], using: &rng)
            self.heads = heads
            scale = 1.5 / Float(headDim).squareRoot()
        }

        /// The kernel's order in float64 with its float32 rounding tracked: folded keys
        /// scale·W_q,hᵀ k_hj and biases scale·b_q,h·k_hj, scores of each query token against them,
        /// a softmax per head, the weighted sum of the folded values W_o,h v_hj, b_o and the residual.
        var foldedReference: [Expected] {
            let (queries, tokenWidth) = (x.shape[1], x.shape[2])
            let keyCount = keys.shape[1], keyWidth = keys.shape[2], valueWidth = values.shape[2]
            let (d, dv) = (keyWidth / heads, valueWidth / heads)
            let s = Expected(exact: scale)
            var foldedKeys = [[Expected]](), biases = [Expected](), foldedValues = [[Expected]]()
            for h in 0..<heads {
                for j in 0..<keyCount {
                    foldedKeys.append((0..<tokenWidth).map { e in
                        (0..<d).reduce(Expected.zero) { sum, i in
                            sum + Expected(exact: keys.data[j * keyWidth + h * d + i]) * Expected(exact: queryWeight.data[(h * d + i) * tokenWidth + e])
                        } * s
                    })
                    biases.append((0..<d).reduce(Expected.zero) { sum, i in
                        sum + Expected(exact: keys.data[j * keyWidth + h * d + i]) * Expected(exact: queryBias.data[h * d + i])
                    } * s)
                    foldedValues.append((0..<tokenWidth).map { e in
                        (0..<dv).reduce(Expected.zero) { sum, i in
                            sum + Expected(exact: values.data[j * valueWidth + h * dv + i]) * Expected(exact: outputWeight.data[e * valueWidth + h * dv + i])
                        }
                    })
                }
            }
            var out = [Expected]()
            for t in 0..<queries {
                var row = (0..<tokenWidth).map { Expected(exact: outputBias.data[$0]) }
                for h in 0..<heads {
                    let scores = (0..<keyCount).map { j in
                        (0..<tokenWidth).reduce(biases[h * keyCount + j]) { sum, e in
                            sum + Expected(exact: x.data[t * tokenWidth + e]) * foldedKeys[h * keyCount + j][e]
                        }
                    }
                    let maxScore = Expected(exact: scores.map(\.value).max()!)
                    let exps = scores.map { ($0 - maxScore).exp(withinULPs: 2) }
                    let total = exps.reduce(Expected.zero, +)
                    for j in 0..<keyCount {
                        let weight = exps[j] / total
                        for e in 0..<tokenWidth { row[e] += weight * foldedValues[h * keyCount + j][e] }
                    }
                }
                out += (0..<tokenWidth).map { row[$0] + Expected(exact: residual.data[t * tokenWidth + $0]) }
            }
            return out
        }

        func run(residual: FloatTensor?) -> FloatTensor {
            Kernels.attentionFoldingQueryOutputProjections(tokens: x, keys: keys, values: values, queryWeight: queryWeight,
                                                           queryBias: queryBias, outputWeight: outputWeight, outputBias: outputBias,
                                                           heads: heads, scale: scale, residual: residual)
        }
    }

    @Test("matches the folded order's float64 value within its rounding", arguments: shapes)
    func matchesReference(_ s: (Int, Int, Int, Int, Int, Int)) {
        let c = Case(s, seed: UInt64(s.0 * 11 + s.1))
        expectClose(c.run(residual: c.residual), c.foldedReference, shape: c.x.shape, "folded query/output attention \(s)")
    }

    @Test("without a residual it is out_proj's output")
    func withoutResidual() {
        let c = Case((9, 3, 13, 3, 5, 2), seed: 5)
        var withResidual = c.run(residual: nil)
        Kernels.add(&withResidual, c.residual)
        #expect(withResidual.isBitwiseEqual(to: c.run(residual: c.residual)))
    }

    /// The identity the kernel rests on, in float64: q_proj, attention over the projected keys and
    /// values, out_proj and the residual give the folded order's value.
    @Test("the folded order is the projected attention", arguments: shapes)
    func foldedOrderIsProjectedAttention(_ s: (Int, Int, Int, Int, Int, Int)) {
        let c = Case(s, seed: UInt64(s.0 * 3 + s.2))
        let (queries, tokenWidth) = (c.x.shape[1], c.x.shape[2])
        let projectedQueries = LinearTests.reference(c.x, c.queryWeight, c.queryBias)
        // The reference attention takes float32 queries: give it the float64 projection's values
        // and compare values only.
        let q = FloatTensor(shape: [1, queries, c.queryWeight.shape[0]], data: projectedQueries.map { Float($0.value) })
        let mixed = AttentionTests.reference(q: q, k: c.keys, v: c.values, heads: c.heads, scale: c.scale, bias: nil)
        var projected = [Double]()
        for t in 0..<queries {
            for e in 0..<tokenWidth {
                var sum = Double(c.outputBias.data[e]) + Double(c.residual.data[t * tokenWidth + e])
                for i in 0..<c.values.shape[2] { sum += mixed[t * c.values.shape[2] + i].value * Double(c.outputWeight.data[e * c.values.shape[2] + i]) }
                projected.append(sum)
            }
        }
        // The queries went through float32 once: allow that rounding, far below any wiring error.
        let worst = zip(projected, c.foldedReference).map { abs($0 - $1.value) / max(1, abs($0)) }.max() ?? .infinity
        #expect(worst < 1e-5, "largest relative difference \(worst)")
    }

    @Test("pays only while heads times the padded keys stay below the projected width")
    func paysBelowProjectedWidth() {
        // MobileSAM: 8 heads, 128 projected dims. A click or a box (7 tokens) and 8 tokens pad to 8 and fold; 9 pads to 16.
        #expect(Kernels.foldingQueryOutputProjectionsPays(keyLength: 7, heads: 8, projectedWidth: 128))
        #expect(Kernels.foldingQueryOutputProjectionsPays(keyLength: 8, heads: 8, projectedWidth: 128))
        #expect(!Kernels.foldingQueryOutputProjectionsPays(keyLength: 9, heads: 8, projectedWidth: 128))
    }
}
