import CBFloat16
import Foundation
import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

/// `Kernels.attention` at `.bfloat16`: both products on CBFloat16. Against a float64 attention of the
/// bfloat16-rounded operands (the scaled queries, keys, values), the softmax's weights are the one
/// operand rounded inside: each weight p moves by at most 2⁻⁹ p, so an output moves by at most
/// 2⁻⁹ Σ p |v| plus the float32 summation of scores and sums. The bound below is 2⁻⁸ Σ p |v| + 1e-6;
/// a misplaced key, value or head gives errors of the size of the values.
@Suite("bfloat16 attention", .serialized, .enabled(if: Kernels.bfloat16Available, "this CPU has no AVX512_BF16"))
struct BFloat16AttentionTests {
    /// (queries, keys, head dim, value head dim, heads, bias): one pair-padded head dim (13), keys past
    /// a 32-key panel and 1024 keys (three blocks of the running softmax, the last of 6), two heads side
    /// by side, a bias [H, Lq, Lk], over one key block and over three.
    static let cases = [(5, 7, 8, 4, 1, false), (37, 1030, 256, 64, 1, false), (20, 50, 13, 5, 2, true), (130, 70, 16, 16, 1, false),
                        (33, 1100, 24, 8, 2, true)]

    /// A bias of -inf over the first key block (a mask) leaves its keys out, as the whole row's softmax
    /// does: the same output as attention over the other keys alone, whose key blocks are the same.
    @Test("a bias of -inf over a whole key block leaves those keys out")
    func maskedKeyBlock() throws {
        let (queryLength, keyLength, masked, headDim, valueDim) = (9, 1100, Kernels.bfloat16AttentionKeyBlock, 16, 8)
        let q = FloatTensor(shape: [1, queryLength, headDim], data: BFloat16LinearTests.values(queryLength * headDim, seed: 21))
        let k = FloatTensor(shape: [1, keyLength, headDim], data: BFloat16LinearTests.values(keyLength * headDim, seed: 22))
        let v = FloatTensor(shape: [1, keyLength, valueDim], data: BFloat16LinearTests.values(keyLength * valueDim, seed: 23))
        var bias = FloatTensor(shape: [1, queryLength, keyLength], data: [Float](repeating: 0, count: queryLength * keyLength))
        for r in 0..<queryLength { for j in 0..<masked { bias.data[r * keyLength + j] = -.infinity } }
        let kept = keyLength - masked
        let keptK = FloatTensor(shape: [1, kept, headDim], data: Array(k.data[(masked * headDim)...]))
        let keptV = FloatTensor(shape: [1, kept, valueDim], data: Array(v.data[(masked * valueDim)...]))
        let out = Kernels.attention(q: q, k: k, v: v, heads: 1, scale: 0.25, bias: bias, precision: .bfloat16)
        let expected = Kernels.attention(q: q, k: keptK, v: keptV, heads: 1, scale: 0.25, bias: nil, precision: .bfloat16)
        #expect(out.data.allSatisfy { $0.isFinite })
        let difference = zip(out.data, expected.data).map { abs($0 - $1) }.max() ?? .infinity
        #expect(difference <= 1e-6, "largest difference \(difference)")
    }

    @Test("softmax(q kᵀ) v with bfloat16 products, on every implementation", arguments: cases)
    func matchesRoundedReference(_ c: (Int, Int, Int, Int, Int, Bool)) throws {
        let (queryLength, keyLength, headDim, valueDim, heads, hasBias) = c
        let scale = 1 / Float(headDim).squareRoot()
        let q = FloatTensor(shape: [1, queryLength, heads * headDim], data: BFloat16LinearTests.values(queryLength * heads * headDim, seed: 11))
        let k = FloatTensor(shape: [1, keyLength, heads * headDim], data: BFloat16LinearTests.values(keyLength * heads * headDim, seed: 12))
        let v = FloatTensor(shape: [1, keyLength, heads * valueDim], data: BFloat16LinearTests.values(keyLength * heads * valueDim, seed: 13))
        let bias = hasBias ? FloatTensor(shape: [heads, queryLength, keyLength],
                                         data: BFloat16LinearTests.values(heads * queryLength * keyLength, seed: 14)) : nil
        let round = BFloat16LinearTests.bfloat16
        var expected = [Double](), magnitudes = [Double]()
        for h in 0..<heads {
            for r in 0..<queryLength {
                let scores = (0..<keyLength).map { j -> Double in
                    var sum = 0.0
                    for d in 0..<headDim {
                        sum += Double(round(scale * q.data[r * heads * headDim + h * headDim + d]))
                            * Double(round(k.data[j * heads * headDim + h * headDim + d]))
                    }
                    return sum + Double(bias.map { $0.data[(h * queryLength + r) * keyLength + j] } ?? 0)
                }
                let largest = scores.max()!
                let weights = scores.map { exp($0 - largest) }, total = weights.reduce(0, +)
                for e in 0..<valueDim {
                    var sum = 0.0, magnitude = 0.0
                    for j in 0..<keyLength {
                        let value = Double(round(v.data[j * heads * valueDim + h * valueDim + e]))
                        sum += weights[j] / total * value
                        magnitude += weights[j] / total * abs(value)
                    }
                    expected.append(sum)
                    magnitudes.append(magnitude)
                }
            }
        }
        // Output element (r, h, e) is expected[(h * Lq + r) * Dv + e].
        try KernelImplementations.each(from: sam_bf16_implementation(), through: 1, limit: sam_bf16_limit_implementation) { level in
            let out = try Kernels.withLinearPrecision(.bfloat16) {
                Kernels.attention(q: q, k: k, v: v, heads: heads, scale: scale, bias: bias, precision: Kernels.linearPrecision)
            }
            var worstExcess = -Double.infinity
            for h in 0..<heads {
                for r in 0..<queryLength {
                    for e in 0..<valueDim {
                        let index = (h * queryLength + r) * valueDim + e
                        let error = abs(Double(out.data[r * heads * valueDim + h * valueDim + e]) - expected[index])
                        worstExcess = max(worstExcess, error / (0x1p-8 * magnitudes[index] + 1e-6))
                    }
                }
            }
            #expect(worstExcess <= 1, "worst error \(worstExcess) times the bound, \(c), implementation \(level)")
        }
    }

    /// Hiera's global attention: one projection's q|k|v, heads grouped by part, read in place.
    @Test("packed q|k|v at bfloat16 is the attention of the three parts, bit for bit")
    func packedMatchesSeparate() {
        let (length, heads, headDim) = (600, 2, 24), width = heads * headDim
        let packed = FloatTensor(shape: [1, length, 3 * width], data: BFloat16LinearTests.values(length * 3 * width, seed: 31))
        func part(_ index: Int) -> FloatTensor {
            var data = [Float]()
            for row in 0..<length { data += packed.data[(row * 3 + index) * width..<(row * 3 + index + 1) * width] }
            return FloatTensor(shape: [1, length, width], data: data)
        }
        let scale = 1 / Float(headDim).squareRoot()
        let together = Kernels.attention(packedQKV: packed, heads: heads, keyDim: headDim, valueDim: headDim, scale: scale, bias: nil,
                                         precision: .bfloat16)
        let apart = Kernels.attention(q: part(0), k: part(1), v: part(2), heads: heads, scale: scale, bias: nil, precision: .bfloat16)
        #expect(together.shape == apart.shape && together.data == apart.data)
        let float32 = Kernels.attention(packedQKV: packed, heads: heads, keyDim: headDim, valueDim: headDim, scale: scale, bias: nil)
        #expect(float32.data != together.data, "the packed attention at bfloat16 ran in float32")
    }

    @Test("float32 unless asked: the default precision is the float32 attention")
    func float32ByDefault() throws {
        let q = FloatTensor(shape: [1, 40, 32], data: BFloat16LinearTests.values(40 * 32, seed: 21))
        let k = FloatTensor(shape: [1, 1100, 32], data: BFloat16LinearTests.values(1100 * 32, seed: 22))
        let v = FloatTensor(shape: [1, 1100, 96], data: BFloat16LinearTests.values(1100 * 96, seed: 23))
        let reference = Kernels.attention(q: q, k: k, v: v, heads: 1, scale: 0.25, bias: nil)
        let unasked = try Kernels.withLinearPrecision(.bfloat16) { Kernels.attention(q: q, k: k, v: v, heads: 1, scale: 0.25, bias: nil) }
        #expect(unasked.data == reference.data)
        let reduced = Kernels.attention(q: q, k: k, v: v, heads: 1, scale: 0.25, bias: nil, precision: .bfloat16)
        let largest = zip(reference.data, reduced.data).map { abs($0 - $1) }.max() ?? 0
        #expect(largest > 1e-5 && largest < 0.05, "bfloat16 vs float32 attention: \(largest)")
    }
}
