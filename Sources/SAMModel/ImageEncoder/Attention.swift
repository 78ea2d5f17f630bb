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
        /// The rows of `qkv` that produce q, k and v, regrouped at load time. Upstream views the
        /// qkv output as [B, N, heads, 2*key_dim + d] and splits the last dim, so the rows are
        /// interleaved per head (q₀ k₀ v₀ q₁ k₁ v₁ ...); each part here holds its heads'
        /// rows in head order, i.e. exactly the [B, N, heads * width] layout `Kernels.attention` reads.
        public let query: NN.Linear
        public let key: NN.Linear
        public let value: NN.Linear
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
            let qkv = try NN.Linear(weights: weights, path: "\(path).qkv", inFeatures: dim, outFeatures: heads * perHead)
            query = qkv.rows(heads: heads, stride: perHead, offset: 0, width: keyDim)
            key = qkv.rows(heads: heads, stride: perHead, offset: keyDim, width: keyDim)
            value = qkv.rows(heads: heads, stride: perHead, offset: 2 * keyDim, width: valueDim)
            proj = try NN.Linear(weights: weights, path: "\(path).proj", inFeatures: heads * valueDim, outFeatures: dim)
        }

        /// [windows, N, dim] -> [windows, N, dim]
        // ref: tiny_vit_sam.py Attention.forward (L260-284), eval mode (bias = self.ab)
        public func callAsFunction(_ x: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
            precondition(x.shape.count == 3 && x.shape[1] == bias.shape[1] && x.shape[2] == dim,
                         "\(path): input \(x.shape) is not [windows, \(bias.shape[1]), \(dim)]")
            let normed = norm.normalized(x, observer: observer)
            let q = query(normed), k = key(normed), v = value(normed)
            if let observer { observer(query.path, interleavedQKV(q, k, v)) }
            // softmax(q kᵀ * scale + ab) v, heads merged back: (attn @ v).transpose(1, 2).reshape(B, N, dh)
            let attended = Kernels.attention(q: q, k: k, v: v, heads: heads, scale: scale, bias: bias)
            let y = proj(attended, observer: observer)
            observer?(path, y)
            return y
        }

        /// PyTorch's `qkv` output rebuilt from the regrouped parts, for observers only.
        private func interleavedQKV(_ q: FloatTensor, _ k: FloatTensor, _ v: FloatTensor) -> FloatTensor {
            let rows = q.count / (heads * keyDim), perHead = 2 * keyDim + valueDim
            var qkv = FloatTensor(zeros: Array(q.shape.dropLast()) + [heads * perHead])
            for row in 0..<rows {
                for head in 0..<heads {
                    let base = row * heads * perHead + head * perHead
                    for i in 0..<keyDim {
                        qkv.data[base + i] = q.data[(row * heads + head) * keyDim + i]
                        qkv.data[base + keyDim + i] = k.data[(row * heads + head) * keyDim + i]
                    }
                    for i in 0..<valueDim {
                        qkv.data[base + 2 * keyDim + i] = v.data[(row * heads + head) * valueDim + i]
                    }
                }
            }
            return qkv
        }
    }
}

extension NN.Linear {
    /// A Linear made of rows `head * stride + offset ..< + width` of this one, for every head in order.
    fileprivate func rows(heads: Int, stride: Int, offset: Int, width: Int) -> NN.Linear {
        var newWeight = FloatTensor(zeros: [heads * width, inFeatures])
        var newBias = FloatTensor(zeros: [heads * width])
        for head in 0..<heads {
            for row in 0..<width {
                let source = head * stride + offset + row, destination = head * width + row
                newWeight.data.replaceSubrange(destination * inFeatures ..< (destination + 1) * inFeatures,
                                               with: weight.data[source * inFeatures ..< (source + 1) * inFeatures])
                newBias.data[destination] = bias.data[source]
            }
        }
        return NN.Linear(path: path, weight: newWeight, bias: newBias)
    }

    /// A Linear from tensors already in memory (same module, so it may set the stored properties).
    fileprivate init(path: String, weight: FloatTensor, bias: FloatTensor) {
        precondition(weight.shape.count == 2 && bias.shape == [weight.shape[0]], "Linear \(path): bad shapes")
        self.path = path
        self.weight = weight
        self.bias = bias
    }
}
