import Foundation
import SAMKernels
import SAMTensor

extension ImageEncoderViT {
    /// image_encoder.py Attention: one qkv projection (its output already all heads' q, then k,
    /// then v), scaled dot-product attention with decomposed relative positions over a square grid
    /// (a window, or the whole 64x64 map in a global block), output projection.
    package struct Attention: Sendable {
        package static let key = "attn"
        package let path: String
        package let qkv: NN.Linear
        package let proj: NN.Linear
        package let heads: Int
        package let headDim: Int
        /// head_dim ** -0.5
        package let scale: Float
        /// `rel_pos_h` / `rel_pos_w` gathered for this attention's grid; nil without relative positions.
        package let positions: Kernels.RelativePositionTables?
        /// Side of the grid it attends over (the window, or the whole token grid).
        package let gridSize: Int

        /// `heads` comes from the config; with relative positions, `rel_pos_h` [2*size-1, head_dim]
        /// must agree with it.
        init(weights: WeightStore, path: String, dim: Int, heads: Int, gridSize: Int, useRelativePositions: Bool) throws(WeightError) {
            self.path = path
            self.gridSize = gridSize
            guard heads >= 1, dim % heads == 0 else {
                throw .invalid(key: "\(path).qkv.weight", reason: "\(heads) heads do not divide dim \(dim)", source: weights.source)
            }
            self.heads = heads
            headDim = dim / heads
            scale = Float(pow(Double(headDim), -0.5))
            qkv = try NN.Linear(weights: weights, path: "\(path).qkv", inFeatures: dim, outFeatures: 3 * dim)
            proj = try NN.Linear(weights: weights, path: "\(path).proj", inFeatures: dim, outFeatures: dim)
            if useRelativePositions {
                // ref: image_encoder.py Attention.__init__: zeros(2 * input_size - 1, head_dim); other
                // lengths are resized when used (get_rel_pos).
                let heightKey = "\(path).rel_pos_h", widthKey = "\(path).rel_pos_w"
                let heights = try NN.take(heightKey, shape: [nil, headDim], from: weights)
                let widths = try NN.take(widthKey, shape: [nil, headDim], from: weights)
                guard heights.shape[0] >= 1, widths.shape[0] >= 1 else {
                    throw .invalid(key: heightKey, reason: "empty relative-position table", source: weights.source)
                }
                positions = Kernels.RelativePositionTables(
                    heights: gatheredRelativePositions(heights, querySize: gridSize, keySize: gridSize),
                    widths: gatheredRelativePositions(widths, querySize: gridSize, keySize: gridSize))
            } else {
                positions = nil
            }
        }

        /// [B, gridSize², dim] (a batch of windows, or the whole grid) -> the same shape.
        /// ref: image_encoder.py Attention.forward
        package func callAsFunction(_ x: FloatTensor, then epilogue: Kernels.Epilogue = .none,
                                   observer: ModuleObserver? = nil) -> FloatTensor {
            let attended = attend(packedQKV: qkv(x, observer: observer))
            guard let observer else { return proj(attended, then: epilogue) }
            var y = proj(attended, observer: observer)
            observer(path, y)
            Kernels.applyEpilogue(epilogue, to: &y)
            return y
        }

        /// The attention between the two projections: qkv's output [B, gridSize², 3 * dim] -> the
        /// heads' values [B, gridSize², dim], before proj.
        package func attend(packedQKV packed: FloatTensor) -> FloatTensor {
            guard let positions else {
                return Kernels.attention(packedQKV: packed, heads: heads, keyDim: headDim, valueDim: headDim, scale: scale, bias: nil)
            }
            return Kernels.relativePositionAttention(packedQKV: packed, heads: heads, scale: scale, positions: positions)
        }
    }
}
