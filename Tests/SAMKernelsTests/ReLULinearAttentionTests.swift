import Foundation
import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

/// EfficientViT's ReLU linear attention against a float64 evaluation of upstream's formula.
@Suite("ReLU linear attention")
struct ReLULinearAttentionTests {
    /// Per head (channels [q | k | v] of `dim` each): vk = [v; 1] relu(k)ᵀ, out = vk relu(q),
    /// result = out[:dim] / (out[dim] + eps), in upstream's order of sums.
    static func reference(_ qkv: FloatTensor, dim: Int, eps: Float) -> [Expected] {
        let batch = qkv.shape[0], heads = qkv.shape[1] / (3 * dim), tokens = qkv.shape[2] * qkv.shape[3]
        var out: [Expected] = []
        for head in 0..<(batch * heads) {
            let base = head * 3 * dim * tokens
            func value(_ row: Int, _ token: Int) -> Float { qkv.data[base + row * tokens + token] }
            let q = (0..<dim).map { e in (0..<tokens).map { Expected(exact: max(value(e, $0), 0)) } }
            let k = (0..<dim).map { e in (0..<tokens).map { Expected(exact: max(value(dim + e, $0), 0)) } }
            let v = (0..<dim).map { d in (0..<tokens).map { Expected(exact: value(2 * dim + d, $0)) } }
                + [[Expected](repeating: Expected(exact: 1.0), count: tokens)]
            let vk = (0...dim).map { d in (0..<dim).map { e in (0..<tokens).reduce(Expected.zero) { $0 + v[d][$1] * k[e][$1] } } }
            let product = (0...dim).map { d in (0..<tokens).map { i in (0..<dim).reduce(Expected.zero) { $0 + vk[d][$1] * q[$1][i] } } }
            for d in 0..<dim {
                for i in 0..<tokens { out.append(product[d][i] / (product[dim][i] + Expected(exact: eps))) }
            }
        }
        return out
    }

    @Test("matches the float64 formula", arguments: [(batch: 2, heads: 3, dim: 4, height: 3, width: 5),
                                                     (batch: 1, heads: 2, dim: 32, height: 16, width: 16)])
    func matchesReference(size: (batch: Int, heads: Int, dim: Int, height: Int, width: Int)) {
        var rng = SplitMix64(seed: UInt64(size.dim))
        let qkv = randomTensor([size.batch, size.heads * 3 * size.dim, size.height, size.width], using: &rng)
        let out = Kernels.reluLinearAttention(qkv, headDim: size.dim, eps: 1e-15)
        expectClose(out, Self.reference(qkv, dim: size.dim, eps: 1e-15),
                    shape: [size.batch, size.heads * size.dim, size.height, size.width], "relu linear attention dim \(size.dim)")
    }

    @Test("a query all zero after ReLU gives 0 (0 / eps), not NaN")
    func zeroQuery() {
        var rng = SplitMix64(seed: 5)
        let dim = 4, tokens = 6
        var qkv = randomTensor([1, 3 * dim, 2, 3], in: 0.1...1, using: &rng)
        for row in 0..<dim { qkv.data[row * tokens + 2] = -0.5 }  // every q of token 2 negative
        let out = Kernels.reluLinearAttention(qkv, headDim: dim, eps: 1e-15)
        #expect((0..<dim).allSatisfy { out.data[$0 * tokens + 2] == 0 })
        #expect(out.data.allSatisfy { $0.isFinite })
        expectClose(out, Self.reference(qkv, dim: dim, eps: 1e-15), shape: [1, dim, 2, 3], "relu linear attention zero query")
    }
}
