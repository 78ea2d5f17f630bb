import SAMKernels
import SAMTensor

/// hieradet.py `MultiScaleBlock`: x + attn(norm1(x)) (in zero-padded windows unless global; at a
/// stage transition the shortcut is proj(norm1(x)) max-pooled and the queries are pooled too),
/// then x + mlp(norm2(x)).
package struct HieraBlock: Sendable {
    package let path: String
    package let layout: HieraConfig.BlockLayout
    package let norm1: NN.LayerNorm
    package let attn: HieraAttention
    package let norm2: NN.LayerNorm
    package let mlp: SAM2MLP
    /// dim -> dimOut for the shortcut, when the width changes.
    package let proj: NN.Linear?

    init(weights: WeightStore, path: String, layout: HieraConfig.BlockLayout, mlpRatio: Double) throws(WeightError) {
        self.path = path
        self.layout = layout
        let eps = HieraConfig.layerNormEps
        norm1 = try NN.LayerNorm(weights: weights, path: "\(path).norm1", dim: layout.dim, eps: eps)
        attn = try HieraAttention(weights: weights, path: "\(path).attn", dim: layout.dim, dimOut: layout.dimOut,
                                  heads: layout.heads, queryStride: layout.queryStride, poolPath: "\(path).pool")
        norm2 = try NN.LayerNorm(weights: weights, path: "\(path).norm2", dim: layout.dimOut, eps: eps)
        mlp = try SAM2MLP(weights: weights, path: "\(path).mlp", inputDim: layout.dimOut, hiddenDim: nil, outputDim: layout.dimOut,
                          layerCount: 2, activation: .gelu)
        if mlp.hiddenDim != Int(Double(layout.dimOut) * mlpRatio) {
            throw weights.configMismatch("\(path).mlp.layers.0.weight", "mlp_ratio", weights: Double(mlp.hiddenDim) / Double(layout.dimOut),
                                         config: mlpRatio, because: "shape \(mlp.layers[0].weight.shape)")
        }
        if layout.dim != layout.dimOut {
            proj = try NN.Linear(weights: weights, path: "\(path).proj", inFeatures: layout.dim, outFeatures: layout.dimOut)
        } else {
            proj = nil
        }
        if let stride = layout.queryStride, layout.window > 0, layout.window % stride != 0 {
            throw .invalid(key: "\(path).attn.qkv.weight", reason: "window \(layout.window) does not pool by \(stride): "
                           + "upstream's unpartition needs the previous stage's window to be a multiple of q_stride",
                           source: weights.source)
        }
    }

    /// The grid after this block (the input's, halved when the block pools).
    package func outputGrid(_ grid: GridSize) -> GridSize {
        guard let stride = layout.queryStride else { return grid }
        return GridSize(height: grid.height / stride, width: grid.width / stride)
    }

    /// x [B, H*W, dim] tokens of an H x W grid -> [B, H'*W', dimOut].
    /// Observers see tokens as [B, H, W, C] and windows as [B * windows, w, w, C], PyTorch's layouts.
    /// ref: hieradet.py MultiScaleBlock.forward
    package func callAsFunction(_ x: FloatTensor, grid: GridSize, observer: ModuleObserver? = nil) -> FloatTensor {
        let batch = x.shape[0]
        let outGrid = outputGrid(grid)
        // ref: forward — shortcut = x; x = self.norm1(x)
        let normed = norm1.normalized(x, observer: nil)
        observer?(norm1.path, Self.onGrid(normed, grid))
        var y: FloatTensor
        if observer == nil, let fused = pooledWindowFront(normed, grid: grid) {
            // ref: forward — window_partition, attention with pooled queries, window_unpartition, cropped,
            // x = shortcut + self.drop_path(x): the attention's output projection, then the merge
            let window = layout.window, pooledWindow = layout.window / (layout.queryStride ?? 1)
            let merge = WindowPartition(resolution: outGrid, window: pooledWindow)
            precondition(merge.windowRows * merge.windowColumns * batch == fused.attended.shape[0],
                         "\(path): \(grid) in windows of \(window) and \(outGrid) in windows of \(pooledWindow) do not line up")
            y = merge.merge(attn.proj(fused.attended), batch: batch, plusResidual: fused.shortcut)
        } else {
            y = attendUnfused(x, normed: normed, grid: grid, outGrid: outGrid, observer: observer)
        }
        // ref: forward — x = x + self.drop_path(self.mlp(self.norm2(x)))
        let normed2 = norm2.normalized(y, observer: nil)
        observer?(norm2.path, Self.onGrid(normed2, outGrid))
        let mlpObserver = observer.map { observer in
            { (p: String, t: FloatTensor) in observer(p, t.shape.count == 3 ? Self.onGrid(t, outGrid) : t) } as ModuleObserver
        }
        y = mlp(normed2, plusResidual: y, observer: mlpObserver)
        observer?(path, Self.onGrid(y, outGrid))
        return y
    }

    /// Tokens [B, H*W, C] on grid `g` as PyTorch's [B, H, W, C], for an observer.
    private static func onGrid(_ y: FloatTensor, _ g: GridSize) -> FloatTensor { y.reshaped([y.shape[0], g.height, g.width, y.shape[2]]) }

    /// A stage transition's shortcut, queries pooled and window attention in one pass over the
    /// windows (`Kernels.pooledWindowAttention`), where that runs: no observer, float32 panel products.
    private func pooledWindowFront(_ normed: FloatTensor, grid: GridSize) -> (attended: FloatTensor, shortcut: FloatTensor)? {
        guard layout.window > 0, let stride = layout.queryStride, let proj else { return nil }
        return Kernels.pooledWindowAttention(normed, height: grid.height, width: grid.width, window: layout.window, stride: stride,
                                             qkv: attn.qkv.weight, qkvBias: attn.qkv.bias, shortcutProjection: proj.weight,
                                             shortcutBias: proj.bias, heads: attn.heads, scale: attn.scale)
    }

    /// x + attn(norm1(x)) layer by layer, as upstream runs it (the shortcut projected and pooled at a
    /// stage transition): every block an observer watches, and the blocks `pooledWindowFront` leaves.
    private func attendUnfused(_ x: FloatTensor, normed: FloatTensor, grid: GridSize, outGrid: GridSize,
                               observer: ModuleObserver?) -> FloatTensor {
        let batch = x.shape[0]
        var y: FloatTensor
        var shortcut = x
        if let proj {
            // ref: forward — shortcut = do_pool(self.proj(x), self.pool)
            let projected = proj(normed)
            observer?(proj.path, Self.onGrid(projected, grid))
            if let stride = layout.queryStride {
                shortcut = Kernels.maxPoolTokens(projected, height: grid.height, width: grid.width, stride: stride)
                observer?("\(path).pool", Kernels.tokensToNCHW(shortcut, height: outGrid.height, width: outGrid.width))
            } else {
                shortcut = projected
            }
        }
        if layout.window > 0 && layout.queryStride == nil {
            // ref: forward — window_partition (zero padding after norm1), attention, window_unpartition, cropped,
            // then x = shortcut + self.drop_path(x) (drop_path is the identity in eval)
            y = attn.windowed(normed, grid: grid, window: layout.window, plusResidual: shortcut, observer: observer)
        } else if layout.window > 0, let stride = layout.queryStride {
            // ref: forward — window_partition (zero padding after norm1), attention with pooled queries,
            // window_unpartition with the pooled window over the pooled, padded grid, cropped
            let window = layout.window, pooledWindow = layout.window / stride
            let partition = WindowPartition(resolution: grid, window: window)
            let merge = WindowPartition(resolution: outGrid, window: pooledWindow)
            precondition(partition.windowRows == merge.windowRows && partition.windowColumns == merge.windowColumns,
                         "\(path): \(grid) in windows of \(window) and \(outGrid) in windows of \(pooledWindow) do not line up")
            let attended = attn(partition.partition(normed), grid: GridSize(height: window, width: window), observer: observer)
            // ref: forward — x = shortcut + self.drop_path(x) (drop_path is the identity in eval)
            y = merge.merge(attended, batch: batch, plusResidual: shortcut)
        } else {
            // Global attention: its products follow the linear layers' precision.
            y = attn(normed, grid: grid, then: Kernels.Epilogue(residual: shortcut), precision: Kernels.linearPrecision, observer: observer)
        }
        return y
    }
}
