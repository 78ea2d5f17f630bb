import SAMKernels
import SAMTensor

#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

extension TinyViT {
    /// tiny_vit_sam.py Attention as TinyViTBlock builds it (key_dim = dim / num_heads,
    /// attn_ratio 1): LayerNorm, qkv projection, multi-head attention inside one window with a
    /// learned bias per head and relative offset, output projection. Runs on a batch of windows
    /// [windows, N, dim], N = window side².
    package struct Attention: Sendable {
        package static let key = "attn"
        package let path: String
        package let norm: NN.LayerNorm
        /// One product for q, k and v. Upstream views its output as [B, N, heads, 2*key_dim + d]
        /// and splits the last dim, so the heads are interleaved (q₀ k₀ v₀ q₁ k₁ v₁ ...); the
        /// attention kernels read that layout (`.interleavedByHead`), so the weight is used as stored.
        package let qkv: NN.Linear
        package let proj: NN.Linear
        package let heads: Int
        package let keyDim: Int
        /// Per-head value width (`d` upstream; = keyDim since attn_ratio is 1).
        package let valueDim: Int
        /// key_dim ** -0.5
        package let scale: Float
        package let biasIndex: AttentionBiasIndex
        /// `attention_biases[:, attention_bias_idxs]`, [heads, N, N], expanded on first use.
        package var bias: FloatTensor { expandedBias.value }
        private let expandedBias: DerivedTensor
        /// qkv(norm(0)) [heads*(2*keyDim + valueDim)], laid out like `qkv`'s output: what a position of
        /// TinyViTBlock's zero padding becomes, a key and value every overhanging window attends to.
        package let paddedPositionQKV: FloatTensor

        package var dim: Int { norm.weight.count }
        package var windowSize: Int { biasIndex.resolution.height }

        /// Reads `heads` from `attention_biases` [heads, offsets] and the window side from
        /// offsets = side² (the distinct (|Δrow|, |Δcol|) pairs of a square window).
        init(weights: WeightStore, path: String, dim: Int) throws(WeightError) {
            self.path = path
            let biasKey = "\(path).attention_biases"
            let biasShape = try weights.requireShape(biasKey)
            guard biasShape.count == 2, biasShape[0] >= 1 else {
                throw .invalid(key: biasKey, reason: "expected [heads, offsets], got \(biasShape)", source: weights.source)
            }
            heads = biasShape[0]
            let side = Int(Double(biasShape[1]).squareRoot().rounded())
            guard side >= 1, side * side == biasShape[1] else {
                throw .invalid(key: biasKey, reason: "\(biasShape[1]) offsets is not a square window's side²", source: weights.source)
            }
            guard dim % heads == 0 else {
                throw .invalid(key: biasKey, reason: "\(heads) heads do not divide dim \(dim)", source: weights.source)
            }
            // ref: tiny_vit_sam.py TinyViTBlock.__init__ (L320-324), Attention.__init__ (L220-231)
            keyDim = dim / heads
            valueDim = keyDim
            scale = Float(pow(Double(keyDim), -0.5))
            biasIndex = AttentionBiasIndex(resolution: GridSize(height: side, width: side))
            let attentionBiases = try weights.take(biasKey, shape: [heads, biasIndex.offsetCount])
            expandedBias = DerivedTensor { [biasIndex] in biasIndex.expand(attentionBiases) }

            norm = try NN.LayerNorm(weights: weights, path: "\(path).norm", dim: dim)
            let perHead = 2 * keyDim + valueDim
            qkv = try NN.Linear(weights: weights, path: "\(path).qkv", inFeatures: dim, outFeatures: heads * perHead)
            proj = try NN.Linear(weights: weights, path: "\(path).proj", inFeatures: heads * valueDim, outFeatures: dim)
            // The same kernels as a padded position in a window would go through.
            paddedPositionQKV = qkv(norm.normalized(FloatTensor(zeros: [1, dim]))).reshaped([heads * perHead])
        }

        /// [windows, N, dim] -> [windows, N, dim]
        // ref: tiny_vit_sam.py Attention.forward (L260-284), eval mode (bias = self.ab)
        package func callAsFunction(_ x: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
            let positions = biasIndex.positions
            precondition(x.shape.count == 3 && x.shape[1] == positions && x.shape[2] == dim,
                         "\(path): input \(x.shape) is not [windows, \(positions), \(dim)]")
            let normed = norm.normalized(x, observer: observer)
            let packed = qkv(normed)
            observer?(qkv.path, packed)
            // softmax(q kᵀ * scale + ab) v, heads merged back: (attn @ v).transpose(1, 2).reshape(B, N, dh)
            let attended = Kernels.attention(packedQKV: packed, heads: heads, keyDim: keyDim, valueDim: valueDim,
                                             scale: scale, bias: bias, layout: .interleavedByHead)
            let y = proj(attended, observer: observer)
            observer?(path, y)
            return y
        }

        /// residual + the block's windowed attention of the tokens x [B, H*W, dim] on `grid`, back in
        /// token order: upstream's pad → partition → attention → reverse → crop, computed without
        /// padded windows. LayerNorm, qkv and proj act on each token alone, so they run on the
        /// tokens themselves; padded positions enter only as keys and values (`paddedPositionQKV`).
        // ref: tiny_vit_sam.py TinyViTBlock.forward (L343-369) around Attention.forward (L260-284)
        package func windowed(_ x: FloatTensor, grid: Kernels.WindowGrid, plusResidual residual: FloatTensor) -> FloatTensor {
            precondition(grid.positions == biasIndex.positions && x.shape.count == 3 && x.shape[1] == grid.height * grid.width
                         && x.shape[2] == dim, "\(path): input \(x.shape) is not [B, \(grid.height)*\(grid.width), \(dim)]")
            let packed = qkv(norm.normalized(x))
            let attended = Kernels.windowAttention(packedQKV: packed, grid: grid, paddingQKV: paddedPositionQKV, heads: heads,
                                                   keyDim: keyDim, valueDim: valueDim, scale: scale, bias: bias,
                                                   layout: .interleavedByHead)
            return proj(attended, then: Kernels.Epilogue(residual: residual))
        }
    }
}
