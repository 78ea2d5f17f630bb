import Foundation
import SAMKernels
import SAMTensor

/// hieradet.py `MultiScaleAttention`: one qkv projection to 3 * dimOut (all heads' q, then k, then
/// v), the queries max-pooled 2x2 at a stage transition (q_pool), scaled dot-product attention
/// over a window (or the whole grid), and the output projection.
package struct HieraAttention: Sendable {
    package let path: String
    package let qkv: NN.Linear
    package let proj: NN.Linear
    package let heads: Int
    package let headDim: Int
    /// SDPA's default scale, head_dim ** -0.5.
    package let scale: Float
    /// The query pooling stride (nil: queries are not pooled).
    package let queryStride: Int?
    /// Where PyTorch reports the query pooling: the block's `pool` module, which the attention shares.
    let poolPath: String
    /// qkv of a zero token: what upstream's zero padding of a window (after norm1) becomes.
    let paddedPositionQKV: FloatTensor

    init(weights: WeightStore, path: String, dim: Int, dimOut: Int, heads: Int, queryStride: Int?, poolPath: String) throws(WeightError) {
        self.path = path
        guard heads >= 1, dimOut % heads == 0 else {
            throw .invalid(key: "\(path).qkv.weight", reason: "\(heads) heads do not divide \(dimOut)", source: weights.source)
        }
        qkv = try NN.Linear(weights: weights, path: "\(path).qkv", inFeatures: dim, outFeatures: 3 * dimOut)
        proj = try NN.Linear(weights: weights, path: "\(path).proj", inFeatures: dimOut, outFeatures: dimOut)
        self.heads = heads
        headDim = dimOut / heads
        scale = Float(1 / Double(headDim).squareRoot())
        self.queryStride = queryStride
        self.poolPath = poolPath
        paddedPositionQKV = qkv(FloatTensor(zeros: [1, dim])).reshaped([3 * dimOut])
    }

    package var dimOut: Int { proj.outFeatures }

    /// x [N, h*w, dim]: N windows (or images) of h x w tokens. Returns [N, h'*w', dimOut], h' = h /
    /// stride when the queries are pooled. `then` is applied to the projection's output (a fused
    /// residual add) unless an observer wants it first.
    /// ref: hieradet.py MultiScaleAttention.forward
    /// `precision` is the attention products' (`Kernels.attention`): the global blocks follow the linear
    /// layers' (`--bf16`), a quarter of SAM 2.1 tiny's encoder FLOPs; windows stay float32.
    package func callAsFunction(_ x: FloatTensor, grid: GridSize, then epilogue: Kernels.Epilogue = .none,
                               precision: Kernels.LinearPrecision = .float32, observer: ModuleObserver? = nil) -> FloatTensor {
        attend(packed: qkv(x, observer: nil), grid: grid, then: epilogue, precision: precision, observer: observer)
    }

    /// residual + the attention of the tokens x [B, H*W, dim] on `grid` in windows of `window`
    /// (queries not pooled), in token order: upstream's pad → partition → attention → unpartition →
    /// crop, computed on the grid. qkv and proj act on each token alone, so they run on the grid's
    /// tokens only; padded positions enter as keys and values (`paddedPositionQKV`), and their
    /// queries, which upstream crops away, are skipped (a fifth of stage 3's and 4's rows in
    /// SAM 2.1, whose 64x64 and 32x32 grids pad to 70x70 and 35x35). An observer is also shown
    /// upstream's window layouts, computed on padded windows for it alone.
    package func windowed(_ x: FloatTensor, grid: GridSize, window: Int, plusResidual residual: FloatTensor,
                         observer: ModuleObserver? = nil) -> FloatTensor {
        precondition(queryStride == nil, "\(path): pooled queries are attended in padded windows")
        let packed = qkv(x, observer: nil)
        if let observer {
            let windows = WindowPartition(resolution: grid, window: window).partition(packed, paddingRow: paddedPositionQKV)
            _ = attend(packed: windows, grid: GridSize(height: window, width: window), observer: observer)
        }
        let attended = Kernels.windowAttention(packedQKV: packed, grid: Kernels.WindowGrid(height: grid.height, width: grid.width, window: window),
                                               paddingQKV: paddedPositionQKV, heads: heads, keyDim: headDim, valueDim: headDim,
                                               scale: scale, bias: nil, layout: .groupedByPart)
        return proj(attended, then: Kernels.Epilogue(residual: residual))
    }

    /// The attention after qkv: packed [N, h*w, 3 * dimOut] -> [N, h'*w', dimOut].
    private func attend(packed: FloatTensor, grid: GridSize, then epilogue: Kernels.Epilogue = .none,
                        precision: Kernels.LinearPrecision = .float32, observer: ModuleObserver?) -> FloatTensor {
        let windows = packed.shape[0], width = dimOut
        observer?(qkv.path, packed.reshaped([windows, grid.height, grid.width, 3 * width]))
        let attended: FloatTensor
        if let stride = queryStride {
            // ref: forward — q = do_pool(q.reshape(B, H, W, -1), self.q_pool) (k and v keep every token)
            let q = Kernels.maxPoolTokens(packed, height: grid.height, width: grid.width, stride: stride, channels: 0..<width)
            let pooled = GridSize(height: grid.height / stride, width: grid.width / stride)
            if let observer {
                observer(poolPath, Kernels.tokensToNCHW(q, height: pooled.height, width: pooled.width))
            }
            // ref: forward — F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
            attended = Kernels.attention(q: q, keysAndValuesOf: packed, heads: heads, scale: scale)
        } else {
            attended = Kernels.attention(packedQKV: packed, heads: heads, keyDim: headDim, valueDim: headDim, scale: scale, bias: nil,
                                         precision: precision)
        }
        let outGrid = queryStride.map { GridSize(height: grid.height / $0, width: grid.width / $0) } ?? grid
        guard let observer else { return proj(attended, then: epilogue) }
        var y = proj(attended)
        let layout = [windows, outGrid.height, outGrid.width, width]
        observer(proj.path, y.reshaped(layout))
        observer(path, y.reshaped(layout))
        Kernels.applyEpilogue(epilogue, to: &y)
        return y
    }
}
