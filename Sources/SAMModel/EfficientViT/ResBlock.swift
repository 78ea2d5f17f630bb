import SAMKernels
import SAMTensor

extension EfficientViT {
    /// ops.py ResBlock (`conv1`, `conv2`): k x k (in -> mid, stride s, GELU), then k x k (mid -> out).
    package struct ResBlock: Sendable {
        package let path: String
        package let conv1: ConvLayer
        package let conv2: ConvLayer

        package var outChannels: Int { conv2.outChannels }

        /// ref: ops.py ResBlock.__init__ (mid = round(in * expand)); backbone.py build_local_block "res"
        init(weights: WeightStore, path: String, spec: LocalBlockSpec) throws(WeightError) {
            self.path = path
            conv1 = try ConvLayer(weights: weights, path: "\(path).conv1", inChannels: spec.inChannels, outChannels: nil, kernel: 3,
                                  stride: spec.stride, layout: spec.expansionLayout, batchNormEps: spec.batchNormEps)
            try spec.requireMidChannels(conv1.outChannels, key: "\(path).conv1.conv.weight", source: weights.source)
            conv2 = try ConvLayer(weights: weights, path: "\(path).conv2", inChannels: conv1.outChannels, outChannels: spec.outChannels,
                                  kernel: 3, layout: spec.projectionLayout, batchNormEps: spec.batchNormEps)
        }

        /// ref: ops.py ResBlock.forward
        func callAsFunction(_ x: FloatTensor, plus residual: FloatTensor?, observer: ModuleObserver?) -> FloatTensor {
            let hidden = conv1(x, observer: observer)
            let y = conv2(hidden, plus: residual, observer: observer)
            observer?(path, y)
            return y
        }
    }
}
