import SAMKernels
import SAMTensor

extension EfficientViT {
    /// sam.py SamNeck, a DAGBlock (`neck.input_ops.k`, `neck.middle`, `neck.output_ops.0`): each input
    /// stage through a 1x1 conv + BatchNorm and a bicubic upsampling to the embedding grid, the
    /// results summed, residual middle blocks, a 1x1 output conv with a bias.
    package struct SamNeck: Sendable {
        /// `input_ops.k` (an OpSequential): ConvLayer at `op_list.0`, UpSampleLayer at `op_list.1`.
        package struct Input: Sendable {
            package let path: String
            /// The backbone stage it reads.
            package let stage: Int
            package let conv: ConvLayer
        }

        package let path: String
        package let inputs: [Input]
        /// `middle.op_list.j.main`, each in a ResidualBlock with an identity shortcut.
        let middle: [LocalBlock]
        /// `output_ops.0.op_list.0`
        package let output: ConvLayer
        package let upsampleSize: Int

        package var outChannels: Int { output.outChannels }

        /// `stageWidths`: the backbone's output channels by stage.
        /// ref: sam.py SamNeck.__init__
        init(weights: WeightStore, path: String, stageWidths: [Int], config: EfficientViTConfig) throws(WeightError) {
            self.path = path
            let neck = config.neck, eps = config.batchNormEps
            let inputsPath = "\(path).input_ops"
            try NN.requireConsistent(NN.childCount(inputsPath, in: weights), neck.inputStages.count, field: "neck.inputStages",
                                     key: inputsPath, source: weights.source)
            inputs = try neck.inputStages.indices.map { (index) throws(WeightError) in
                let inputPath = "\(inputsPath).\(index)", stage = neck.inputStages[index]
                guard stageWidths.indices.contains(stage) else {
                    throw .invalid(key: inputPath, reason: "the neck reads stage \(stage), the backbone has \(stageWidths.count)",
                                   source: weights.source)
                }
                // ref: ConvLayer(in_channel, head_width, 1, norm=norm, act_func=None); UpSampleLayer(size=(64, 64))
                let conv = try ConvLayer(weights: weights, path: "\(inputPath).op_list.0", inChannels: stageWidths[stage],
                                         outChannels: neck.headWidth, kernel: 1, layout: .init(bias: false, norm: true, activation: .none),
                                         batchNormEps: eps)
                return Input(path: inputPath, stage: stage, conv: conv)
            }
            let middlePath = "\(path).middle.op_list"
            try NN.requireConsistent(NN.childCount(middlePath, in: weights), neck.headDepth, field: "neck.headDepth", key: middlePath,
                                     source: weights.source)
            // ref: middle_op blocks (head_width -> head_width, expand_ratio, norm everywhere, acts (act, ..., None))
            let spec = LocalBlockSpec(inChannels: neck.headWidth, outChannels: neck.headWidth, stride: 1, expandRatio: neck.expandRatio,
                                      fewerNorm: false, batchNormEps: eps)
            middle = try (0..<neck.headDepth).map { (index) throws(WeightError) in
                try LocalBlock(neck.middleOp, weights: weights, path: "\(middlePath).\(index).main", spec: spec)
            }
            // ref: ConvLayer(head_width, out_dim, 1, use_bias=True, norm=None, act_func=None)
            output = try ConvLayer(weights: weights, path: "\(path).output_ops.0.op_list.0", inChannels: neck.headWidth,
                                   outChannels: neck.outChannels, kernel: 1, layout: .init(bias: true, norm: false, activation: .none),
                                   batchNormEps: eps)
            upsampleSize = neck.upsampleSize
        }

        /// The backbone's stage outputs (indexed by stage) -> the neck's output [B, out, g, g].
        /// ref: ops.py DAGBlock.forward (merge "add", no post_input, middle, the one output op)
        func callAsFunction(stages: [FloatTensor], observer: ModuleObserver?) -> FloatTensor {
            let features = inputs.map { input in
                var y = input.conv(stages[input.stage], observer: observer)
                // ref: ops.py UpSampleLayer.forward -> utils/network.py resize: F.interpolate(mode="bicubic",
                // align_corners=False). Its "already that size" shortcut never fires (a tuple against a list),
                // but at scale 1 the bicubic weights are exactly 0, 1, 0, 0: the identity, so it is skipped here.
                if y.shape[2] != upsampleSize || y.shape[3] != upsampleSize {
                    y = Kernels.resizeBicubic(y, height: upsampleSize, width: upsampleSize)
                }
                observer?("\(input.path).op_list.1", y)
                observer?(input.path, y)
                return y
            }
            // ref: models/utils/list.py list_sum — x[0] + list_sum(x[1:]), i.e. f0 + (f1 + f2)
            var x = features[features.count - 1]
            for feature in features.dropLast().reversed() {
                var sum = feature
                Kernels.add(&sum, x)
                x = sum
            }
            for (index, block) in middle.enumerated() {
                x = EfficientViT.residual(x, path: "\(path).middle.op_list.\(index)", observer: observer) { x, residual, observer in
                    block(x, plus: residual, observer: observer)
                }
            }
            observer?("\(path).middle", x)
            let y = output(x, observer: observer)
            observer?("\(path).output_ops.0", y)
            return y
        }
    }
}
