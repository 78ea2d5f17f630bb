import Foundation
import SAMKernels
import SAMTensor

/// SAM 2's `RoPEAttention`: SAM's attention (q, k, v and output projections, heads) with axial
/// rotary encodings on the queries and on the keys of the image grid. Keys past
/// `count - excludedKeys` (the object pointers) keep no rotation; with several frames' memories,
/// the grid's angles repeat for each (`rope_k_repeat`).
/// ref: sam2/modeling/sam/transformer.py RoPEAttention.forward, Attention
package struct RoPEAttention: Sendable {
    package let path: String
    package let qProj: NN.Linear
    package let kProj: NN.Linear
    package let vProj: NN.Linear
    package let outProj: NN.Linear
    package let heads: Int
    package let theta: Double

    package init(weights: WeightStore, path: String, embeddingDim: Int, keyValueDim: Int?, heads: Int, theta: Double) throws(WeightError) {
        self.path = path
        qProj = try NN.Linear(weights: weights, path: "\(path).q_proj", inFeatures: embeddingDim, outFeatures: nil)
        let internalDim = qProj.outFeatures
        kProj = try NN.Linear(weights: weights, path: "\(path).k_proj", inFeatures: keyValueDim, outFeatures: internalDim)
        vProj = try NN.Linear(weights: weights, path: "\(path).v_proj", inFeatures: kProj.inFeatures, outFeatures: internalDim)
        outProj = try NN.Linear(weights: weights, path: "\(path).out_proj", inFeatures: internalDim, outFeatures: embeddingDim)
        guard heads >= 1, internalDim % heads == 0, (internalDim / heads) % 4 == 0 else {
            throw .invalid(key: "\(path).q_proj.weight", reason: "width \(internalDim) does not split into \(heads) heads "
                           + "of a multiple of 4 (axial RoPE)", source: weights.source)
        }
        self.heads = heads
        self.theta = theta
    }

    package var headDim: Int { qProj.outFeatures / heads }
    package var keyValueDim: Int { kProj.inFeatures }

    /// queries [Lq, C], keys and values [Lk, Ckv] -> [Lq, C]. `rope` is the queries' grid (Lq tokens).
    /// ref: RoPEAttention.forward (num_k_exclude_rope)
    package func callAsFunction(queries: FloatTensor, keys: FloatTensor, values: FloatTensor, rope: AxialRotaryEncoding,
                               excludedKeys: Int = 0, observer: ModuleObserver? = nil) -> FloatTensor {
        var q = qProj(queries).data, k = kProj(keys).data
        let queryLength = queries.shape[0], keyLength = keys.shape[0], width = qProj.outFeatures
        precondition(queryLength == rope.tokenCount, "RoPE: \(queryLength) queries on a \(rope.width)x\(rope.height) grid")
        // ref: apply_rotary_enc — q and k[:, :, :num_k_rope]; the keys repeat the queries' angles
        rope.rotate(&q, tokens: queryLength, heads: heads)
        rope.rotate(&k, tokens: keyLength - excludedKeys, heads: heads)
        let scale = 1 / Float(headDim).squareRoot()
        // The memory attention's products follow the linear layers' precision (`--bf16`): they are most of a frame.
        let precision = Kernels.linearPrecision
        let q3 = FloatTensor(shape: [1, queryLength, width], data: q), k3 = FloatTensor(shape: [1, keyLength, width], data: k)
        let attended: FloatTensor
        if heads == 1 && keyValueDim < width {
            // The values carry no rotation: softmax(q kᵀ) (x W_vᵀ + b_v) = (softmax(q kᵀ) x) W_vᵀ + b_v, as each
            // row of weights sums to one. Attending over the memories' 64 channels instead of the projected 256
            // takes a third of cross-attention's products off; the sums associate differently (rounding only).
            let mixed = Kernels.attention(q: q3, k: k3, v: values.reshaped([1, keyLength, keyValueDim]), heads: 1, scale: scale, bias: nil,
                                          precision: precision)
            attended = vProj(mixed)
        } else {
            // ref: F.scaled_dot_product_attention (scale 1 / sqrt(head dim))
            attended = Kernels.attention(q: q3, k: k3, v: vProj(values).reshaped([1, keyLength, width]), heads: heads, scale: scale,
                                         bias: nil, precision: precision)
        }
        let y = outProj(attended.reshaped([queryLength, width]))
        observer?(path, y)
        return y
    }
}
