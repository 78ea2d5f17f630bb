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
    public struct Attention: Sendable {
        public static let key = "attn"
        public let path: String
        public let norm: NN.LayerNorm
        /// `qkv` with its output rows regrouped at load time. Upstream views the qkv output as
        /// [B, N, heads, 2*key_dim + d] and splits the last dim, so its rows are interleaved per
        /// head (q₀ k₀ v₀ q₁ k₁ v₁ ...); here they are all heads' q rows, then k, then v, the
        /// packed layout `Kernels.attention(packedQKV:)` reads. One product instead of three.
        public let qkv: NN.Linear
        public let proj: NN.Linear
        public let heads: Int
        public let keyDim: Int
        /// Per-head value width (`d` upstream; = keyDim since attn_ratio is 1).
        public let valueDim: Int
        /// key_dim ** -0.5
        public let scale: Float
        public let biasIndex: AttentionBiasIndex
        /// `attention_biases[:, attention_bias_idxs]`, [heads, N, N].
        public let bias: FloatTensor
        /// qkv(norm(0)) [heads*(2*keyDim + valueDim)], packed like `qkv`'s output: what a position of
        /// TinyViTBlock's zero padding becomes, a key and value every overhanging window attends to.
        public let paddedPositionQKV: FloatTensor

        public var dim: Int { norm.weight.count }
        public var windowSize: Int { biasIndex.resolution.height }

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
            bias = biasIndex.expand(try weights.take(biasKey, shape: [heads, biasIndex.offsetCount]))

            norm = try NN.LayerNorm(weights: weights, path: "\(path).norm", dim: dim)
            let perHead = 2 * keyDim + valueDim
            let interleaved = try NN.Linear(weights: weights, path: "\(path).qkv", inFeatures: dim, outFeatures: heads * perHead)
            qkv = interleaved.groupedByPart(heads: heads, parts: [(offset: 0, width: keyDim), (offset: keyDim, width: keyDim),
                                                                  (offset: 2 * keyDim, width: valueDim)], stride: perHead)
            proj = try NN.Linear(weights: weights, path: "\(path).proj", inFeatures: heads * valueDim, outFeatures: dim)
            // The same kernels as a padded position in a window would go through.
            paddedPositionQKV = qkv(norm.normalized(FloatTensor(zeros: [1, dim]))).reshaped([heads * perHead])
        }

        /// [windows, N, dim] -> [windows, N, dim]
        // ref: tiny_vit_sam.py Attention.forward (L260-284), eval mode (bias = self.ab)
        public func callAsFunction(_ x: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
            precondition(x.shape.count == 3 && x.shape[1] == bias.shape[1] && x.shape[2] == dim,
                         "\(path): input \(x.shape) is not [windows, \(bias.shape[1]), \(dim)]")
            let normed = norm.normalized(x, observer: observer)
            let packed = qkv(normed)
            if let observer { observer(qkv.path, interleavedQKV(packed)) }
            // softmax(q kᵀ * scale + ab) v, heads merged back: (attn @ v).transpose(1, 2).reshape(B, N, dh)
            let attended = Kernels.attention(packedQKV: packed, heads: heads, keyDim: keyDim, valueDim: valueDim,
                                             scale: scale, bias: bias)
            let y = proj(attended, observer: observer)
            observer?(path, y)
            return y
        }

        /// residual + the block's windowed attention of the tokens x [B, H*W, dim] on `grid`, back in
        /// token order: upstream's pad → partition → attention → reverse → crop, computed without
        /// padded windows. LayerNorm, qkv and proj act on each token alone, so they run on the
        /// tokens themselves; padded positions enter only as keys and values (`paddedPositionQKV`).
        // ref: tiny_vit_sam.py TinyViTBlock.forward (L343-369) around Attention.forward (L260-284)
        public func windowed(_ x: FloatTensor, grid: Kernels.WindowGrid, plusResidual residual: FloatTensor) -> FloatTensor {
            precondition(grid.positions == bias.shape[1] && x.shape.count == 3 && x.shape[1] == grid.height * grid.width
                         && x.shape[2] == dim, "\(path): input \(x.shape) is not [B, \(grid.height)*\(grid.width), \(dim)]")
            let packed = qkv(norm.normalized(x))
            let attended = Kernels.windowAttention(packedQKV: packed, grid: grid, paddingQKV: paddedPositionQKV, heads: heads,
                                                   keyDim: keyDim, valueDim: valueDim, scale: scale, bias: bias)
            return proj(attended, then: Kernels.Epilogue(residual: residual))
        }

        /// PyTorch's `qkv` output rebuilt from the packed one (q | k | v), for observers only.
        private func interleavedQKV(_ packed: FloatTensor) -> FloatTensor {
            let perHead = 2 * keyDim + valueDim, width = heads * perHead
            let rows = packed.count / width
            var qkv = FloatTensor(zeros: packed.shape)
            let parts: [(packedOffset: Int, headOffset: Int, width: Int)] = [
                (0, 0, keyDim), (heads * keyDim, keyDim, keyDim), (2 * heads * keyDim, 2 * keyDim, valueDim)]
            for row in 0..<rows {
                for head in 0..<heads {
                    for part in parts {
                        for i in 0..<part.width {
                            qkv.data[row * width + head * perHead + part.headOffset + i] =
                                packed.data[row * width + part.packedOffset + head * part.width + i]
                        }
                    }
                }
            }
            return qkv
        }
    }
}

extension NN.Linear {
    /// A Linear whose output rows are regrouped part by part: for each part, rows
    /// `head * stride + part.offset ..< + part.width` of this one for every head in order.
    fileprivate func groupedByPart(heads: Int, parts: [(offset: Int, width: Int)], stride: Int) -> NN.Linear {
        let outRows = heads * parts.reduce(0) { $0 + $1.width }
        var newWeight = FloatTensor(zeros: [outRows, inFeatures])
        var newBias = FloatTensor(zeros: [outRows])
        var destination = 0
        weight.withFloats { source in
            for part in parts {
                for head in 0..<heads {
                    for row in 0..<part.width {
                        let sourceRow = head * stride + part.offset + row
                        newWeight.data.replaceSubrange(destination * inFeatures ..< (destination + 1) * inFeatures,
                                                       with: source[sourceRow * inFeatures ..< (sourceRow + 1) * inFeatures])
                        newBias.data[destination] = bias.data[sourceRow]
                        destination += 1
                    }
                }
            }
        }
        return NN.Linear(path: path, weight: WeightTensor(newWeight), bias: newBias)
    }

    /// A Linear from tensors already in memory (same module, so it may set the stored properties).
    fileprivate init(path: String, weight: WeightTensor, bias: FloatTensor) {
        precondition(weight.shape.count == 2 && bias.shape == [weight.shape[0]], "Linear \(path): bad shapes")
        self.path = path
        self.weight = weight
        self.bias = bias
    }
}
