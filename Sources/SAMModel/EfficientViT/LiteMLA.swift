import SAMKernels
import SAMTensor

extension EfficientViT {
    /// ops.py LiteMLA, the context module: a 1x1 qkv projection, multi-scale copies of it (a depthwise
    /// s x s conv, then a 1x1 conv grouped per q / k / v of each head) appended as more heads, ReLU
    /// linear attention over all of them, a 1x1 projection with BatchNorm. No conv here has a bias.
    package struct LiteMLA: Sendable {
        /// `aggreg.i`: nn.Sequential(depthwise s x s, grouped 1x1), neither with a bias.
        package struct Aggregation: Sendable {
            package let path: String
            /// [3 * totalDim, 1, s, s]
            package let depthwise: FloatTensor
            /// [3 * totalDim, headDim, 1, 1], groups = 3 * heads.
            package let pointwise: FloatTensor
            package let groups: Int

            package var padding: Int { depthwise.shape[2] / 2 }
        }

        package let path: String
        package let qkv: ConvLayer
        package let aggregations: [Aggregation]
        package let proj: ConvLayer
        package let headDim: Int
        package let eps: Float

        /// ref: ops.py LiteMLA.__init__ — heads = int(in // dim * heads_ratio), total_dim = heads * dim,
        /// use_bias False, norm (None, "bn2d"), act (None, None)
        init(weights: WeightStore, path: String, channels: Int, config: EfficientViTConfig, scales: [Int], tokens: Int) throws(WeightError) {
            self.path = path
            let dim = config.qkvDim, heads = config.heads(width: channels), totalDim = heads * dim
            headDim = dim
            eps = Float(config.attentionEps)
            qkv = try ConvLayer(weights: weights, path: "\(path).qkv", inChannels: channels, outChannels: nil, kernel: 1,
                                layout: .init(bias: false, norm: false, activation: .none), batchNormEps: config.batchNormEps)
            guard qkv.outChannels == 3 * totalDim, totalDim > 0 else {
                throw .invalid(key: "\(path).qkv.conv.weight", reason: "the weights give \(qkv.outChannels) qkv channels, the config "
                               + "(qkvDim \(dim), headsRatio \(config.headsRatio): \(heads) heads) gives 3 * \(totalDim)",
                               source: weights.source)
            }
            // ref: LiteMLA.forward — the linear branch runs when H * W > dim, the quadratic one (not ported) otherwise.
            guard tokens > dim else {
                throw .invalid(key: path, reason: "\(tokens) tokens with qkvDim \(dim) take LiteMLA's quadratic branch, "
                               + "which no published model reaches and this port does not run", source: weights.source)
            }
            let aggregationsPath = "\(path).aggreg"
            try NN.requireConsistent(NN.childCount(aggregationsPath, in: weights), scales.count, field: "blockTypes (aggregation scales)",
                                     key: aggregationsPath, source: weights.source)
            aggregations = try scales.indices.map { (index) throws(WeightError) in
                let scale = scales[index], branch = "\(aggregationsPath).\(index)"
                // ref: LiteMLA.__init__ aggreg — Conv2d(3td, 3td, scale, padding=scale // 2, groups=3td),
                // Conv2d(3td, 3td, 1, groups=3 * heads)
                let depthwise = try weights.take("\(branch).0.weight", shape: [3 * totalDim, 1, scale, scale])
                let pointwise = try weights.take("\(branch).1.weight", shape: [3 * totalDim, dim, 1, 1])
                return Aggregation(path: branch, depthwise: depthwise, pointwise: pointwise, groups: 3 * heads)
            }
            proj = try ConvLayer(weights: weights, path: "\(path).proj", inChannels: totalDim * (1 + scales.count), outChannels: channels,
                                 kernel: 1, layout: .init(bias: false, norm: true, activation: .none), batchNormEps: config.batchNormEps)
        }

        /// [B, C, H, W] -> [B, C, H, W]; `residual` as ConvLayer's.
        /// ref: ops.py LiteMLA.forward
        func callAsFunction(_ x: FloatTensor, plus residual: FloatTensor?, observer: ModuleObserver?) -> FloatTensor {
            let projected = qkv(x, observer: observer)
            // ref: multi_scale_qkv = [qkv] + [op(qkv) for op in self.aggreg]; torch.cat(..., dim=1)
            var scales = [projected]
            for aggregation in aggregations {
                let spatial = Kernels.conv2d(projected, weight: aggregation.depthwise, bias: nil, padding: aggregation.padding,
                                             groups: projected.shape[1])
                observer?("\(aggregation.path).0", spatial)
                let mixed = Kernels.conv2d(spatial, weight: aggregation.pointwise, bias: nil, groups: aggregation.groups)
                observer?("\(aggregation.path).1", mixed)
                observer?(aggregation.path, mixed)
                scales.append(mixed)
            }
            let multiScale = Self.concatenatedChannels(scales)
            if let observer {
                // ref: relu_linear_att — q = self.kernel_func(q); k = self.kernel_func(k) (one ReLU module, called twice)
                observer("\(path).kernel_func", Self.heads(of: multiScale, headDim: headDim, part: 0, relu: true))
                observer("\(path).kernel_func", Self.heads(of: multiScale, headDim: headDim, part: 1, relu: true))
            }
            let attended = Kernels.reluLinearAttention(multiScale, headDim: headDim, eps: eps)
            let y = proj(attended, plus: residual, observer: observer)
            observer?(path, y)
            return y
        }

        /// NCHW maps of one batch and size joined along the channels.
        static func concatenatedChannels(_ maps: [FloatTensor]) -> FloatTensor {
            let batch = maps[0].shape[0], height = maps[0].shape[2], width = maps[0].shape[3]
            let channels = maps.reduce(0) { $0 + $1.shape[1] }
            var data: [Float] = []
            data.reserveCapacity(batch * channels * height * width)
            for b in 0..<batch {
                for map in maps {
                    let count = map.shape[1] * height * width
                    data.append(contentsOf: map.data[(b * count)..<((b + 1) * count)])
                }
            }
            return FloatTensor(shape: [batch, channels, height, width], data: data)
        }

        /// q (`part` 0), k (1) or v (2) of every head, [B, G, headDim, H * W], as relu_linear_att
        /// slices the reshaped [B, G, 3 * headDim, H * W] qkv; through ReLU when `relu`.
        static func heads(of qkv: FloatTensor, headDim: Int, part: Int, relu: Bool) -> FloatTensor {
            let batch = qkv.shape[0], groups = qkv.shape[1] / (3 * headDim), tokens = qkv.shape[2] * qkv.shape[3]
            var data: [Float] = []
            data.reserveCapacity(batch * groups * headDim * tokens)
            for head in 0..<(batch * groups) {
                let start = (head * 3 + part) * headDim * tokens
                let rows = qkv.data[start..<(start + headDim * tokens)]
                data.append(contentsOf: relu ? rows.map { max($0, 0) } : Array(rows))
            }
            return FloatTensor(shape: [batch, groups, headDim, tokens], data: data)
        }
    }
}
