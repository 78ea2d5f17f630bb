import SAMKernels
import SAMTensor

extension ImageEncoderViT {
    /// image_encoder.py Block: x + attn(norm1(x)) (in windows, the grid zero-padded to a multiple of
    /// the window, for non-global blocks), then x + mlp(norm2(x)).
    package struct Block: Sendable {
        package let path: String
        package let norm1: NN.LayerNorm
        package let attn: Attention
        package let norm2: NN.LayerNorm
        package let mlp: MLP
        /// 0 for a global block.
        package let windowSize: Int
        /// Side of the token grid.
        package let gridSize: Int

        init(weights: WeightStore, path: String, dim: Int, config: ViTConfig, windowSize: Int) throws(WeightError) {
            self.path = path
            self.windowSize = windowSize
            gridSize = config.gridSize
            let eps = Float(config.layerNormEps)
            norm1 = try NN.LayerNorm(weights: weights, path: "\(path).norm1", dim: dim, eps: eps)
            attn = try Attention(weights: weights, path: "\(path).\(Attention.key)", dim: dim, heads: config.numHeads,
                                 gridSize: windowSize > 0 ? windowSize : config.gridSize,
                                 useRelativePositions: config.useRelativePositions)
            norm2 = try NN.LayerNorm(weights: weights, path: "\(path).norm2", dim: dim, eps: eps)
            mlp = try MLP(weights: weights, path: "\(path).mlp", dim: dim)
        }

        /// [B, grid², dim] tokens -> the same.
        /// ref: image_encoder.py Block.forward
        package func callAsFunction(_ x: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
            let normed = norm1.normalized(x, observer: observer)
            var y: FloatTensor
            if windowSize > 0 {
                let partition = WindowPartition(resolution: GridSize(height: gridSize, width: gridSize), window: windowSize)
                if let observer {
                    // window_partition pads the normalised map with zeros, window_unpartition crops
                    // it: the observed attn output is upstream's, in windows, padding included.
                    let attended = attn(partition.partition(normed), observer: observer)
                    y = partition.merge(attended, batch: x.shape[0], plusResidual: x)
                } else {
                    y = windowedAttention(normed, partition: partition, plusResidual: x)
                }
            } else {
                y = attn(normed, then: Kernels.Epilogue(residual: x), observer: observer)
            }
            y = mlp(norm2.normalized(y, observer: observer), plusResidual: y, observer: observer)
            observer?(path, y)
            return y
        }

        /// Upstream's pad -> partition -> attn -> unpartition -> crop with both projections on the
        /// grid's tokens only. qkv and proj are row-wise: a zero-padded position's qkv row is qkv's
        /// bias (the key and value upstream attends to there), and the padded positions' outputs,
        /// which the crop drops, need no projection. SAM's 64x64 grid in 14x14 windows pads 4096
        /// tokens to 4900: 16% fewer rows through both products.
        /// ref: image_encoder.py Block.forward (window_partition, self.attn, window_unpartition)
        func windowedAttention(_ normed: FloatTensor, partition: WindowPartition, plusResidual residual: FloatTensor) -> FloatTensor {
            let windows = partition.partition(attn.qkv(normed), paddingRow: attn.qkv.bias)
            let merged = partition.merge(attn.attend(packedQKV: windows), batch: normed.shape[0])
            return attn.proj(merged, then: Kernels.Epilogue(residual: residual))
        }
    }

    /// common.py MLPBlock: lin2(GELU(lin1(x))), hidden width mlp_ratio * dim.
    package struct MLP: Sendable {
        package let path: String
        package let lin1: NN.Linear
        package let lin2: NN.Linear

        package var hiddenDim: Int { lin1.outFeatures }

        init(weights: WeightStore, path: String, dim: Int) throws(WeightError) {
            self.path = path
            lin1 = try NN.Linear(weights: weights, path: "\(path).lin1", inFeatures: dim, outFeatures: nil)
            lin2 = try NN.Linear(weights: weights, path: "\(path).lin2", inFeatures: lin1.outFeatures, outFeatures: dim)
        }

        /// residual + mlp(x)
        /// ref: segment_anything/modeling/common.py MLPBlock.forward
        func callAsFunction(_ x: FloatTensor, plusResidual residual: FloatTensor, observer: ModuleObserver?) -> FloatTensor {
            if let y = lin2.int8MLP(x, after: lin1, activation: .gelu, plus: residual, observer: observer) { return y }
            let hidden = lin1(x, then: .gelu, observer: observer)
            if let observer {
                observer("\(path).act", hidden)
                var y = lin2(hidden, observer: observer)
                observer(path, y)
                Kernels.add(&y, residual)
                return y
            }
            return lin2(hidden, then: Kernels.Epilogue(residual: residual))
        }
    }
}
