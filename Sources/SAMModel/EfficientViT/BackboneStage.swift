import SAMKernels
import SAMTensor

extension EfficientViT {
    /// One stage of EfficientViTLargeBackbone (`backbone.stages.i`, an OpSequential at `op_list.j`).
    /// Stage 0: the stem conv (3x3, stride 2, BatchNorm, GELU), then `depth` residual blocks. Later
    /// stages: a stride-2 block that downsamples (no residual; an MBConv in attention stages; expand
    /// ratio x 4), then `depth` residual blocks, or EfficientViTBlocks in attention stages.
    package struct BackboneStage: Sendable {
        enum Op: Sendable {
            /// ConvLayer at `op_list.0` of stage 0.
            case stem(ConvLayer)
            /// ResidualBlock(block, None): the block's output alone.
            case downsample(LocalBlock, path: String)
            /// ResidualBlock(block, IdentityLayer()).
            case residual(LocalBlock, path: String)
            case attention(EfficientViTBlock)
        }

        package let path: String
        let ops: [Op]

        /// ref: backbone.py EfficientViTLargeBackbone.__init__ (stage 0, then each later stage)
        init(weights: WeightStore, path: String, index stage: Int, inChannels: Int, config: EfficientViTConfig) throws(WeightError) {
            self.path = path
            let opsPath = "\(path).op_list"
            let depth = config.depths[stage], width = config.widths[stage], type = config.blockTypes[stage]
            try NN.requireConsistent(NN.childCount(opsPath, in: weights) - 1, depth, field: "depths[\(stage)]", key: opsPath,
                                     source: weights.source)
            func spec(_ input: Int, stride: Int, expand: Double) -> LocalBlockSpec {
                LocalBlockSpec(inChannels: input, outChannels: width, stride: stride, expandRatio: expand,
                               fewerNorm: config.fewerNorm[stage], batchNormEps: config.batchNormEps)
            }
            var ops: [Op] = []
            if stage == 0 {
                // ref: ConvLayer(in_channels, width_list[0], stride=2, norm=norm, act_func=act_func)
                ops.append(.stem(try ConvLayer(weights: weights, path: "\(opsPath).0", inChannels: inChannels, outChannels: width,
                                               kernel: 3, stride: 2, layout: .init(bias: false, norm: true, activation: .geluTanh),
                                               batchNormEps: config.batchNormEps)))
            } else {
                // ref: build_local_block("mb" if block not in ["mb", "fmb"], stride=2, expand_ratio=expand_list[i] * 4)
                let main = "\(opsPath).0.main"
                let block = try LocalBlock(type.downsampleType, weights: weights, path: main,
                                           spec: spec(inChannels, stride: 2, expand: config.expandRatios[stage] * 4))
                ops.append(.downsample(block, path: "\(opsPath).0"))
            }
            let side = config.stageSide(stage)
            for index in (0..<depth).map({ $0 + 1 }) {
                let opPath = "\(opsPath).\(index)"
                if type.isAttention {
                    ops.append(.attention(try EfficientViTBlock(weights: weights, path: opPath, channels: width,
                                                                expandRatio: config.expandRatios[stage], scales: type.attentionScales,
                                                                tokens: side * side, config: config)))
                } else {
                    let block = try LocalBlock(type, weights: weights, path: "\(opPath).main",
                                               spec: spec(width, stride: 1, expand: config.expandRatios[stage]))
                    ops.append(.residual(block, path: opPath))
                }
            }
            self.ops = ops
        }

        /// ref: ops.py OpSequential.forward
        func callAsFunction(_ x: FloatTensor, observer: ModuleObserver?) -> FloatTensor {
            var y = x
            for op in ops {
                switch op {
                case .stem(let conv):
                    y = conv(y, observer: observer)
                case .downsample(let block, let path):
                    y = block(y, plus: nil, observer: observer)
                    observer?(path, y)
                case .residual(let block, let path):
                    y = EfficientViT.residual(y, path: path, observer: observer) { x, residual, observer in
                        block(x, plus: residual, observer: observer)
                    }
                case .attention(let block):
                    y = block(y, observer: observer)
                }
            }
            observer?(path, y)
            return y
        }
    }
}
