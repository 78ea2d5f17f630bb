import SAMKernels
import SAMTensor

extension EfficientViT {
    /// ops.py MBConv (`inverted_conv`, `depth_conv`, `point_conv`): 1x1 (in -> mid, GELU), 3x3
    /// depthwise (stride s, GELU), 1x1 (mid -> out). The stride sits on the depthwise conv.
    package struct MBConv: Sendable {
        package let path: String
        package let invertedConv: ConvLayer
        package let depthConv: ConvLayer
        package let pointConv: ConvLayer
        /// The three convolutions for `Kernels.invertedResidual` (row by row, the mid maps never whole).
        let fused: Kernels.InvertedResidualWeights?

        package var outChannels: Int { pointConv.outChannels }

        /// ref: ops.py MBConv.__init__ (mid = round(in * expand)); backbone.py build_local_block "mb"
        init(weights: WeightStore, path: String, spec: LocalBlockSpec) throws(WeightError) {
            self.path = path
            invertedConv = try ConvLayer(weights: weights, path: "\(path).inverted_conv", inChannels: spec.inChannels, outChannels: nil,
                                         kernel: 1, layout: spec.expansionLayout, batchNormEps: spec.batchNormEps)
            let mid = invertedConv.outChannels
            try spec.requireMidChannels(mid, key: "\(path).inverted_conv.conv.weight", source: weights.source)
            depthConv = try ConvLayer(weights: weights, path: "\(path).depth_conv", inChannels: mid, outChannels: mid, kernel: 3,
                                      stride: spec.stride, groups: nil, layout: spec.expansionLayout, batchNormEps: spec.batchNormEps)
            pointConv = try ConvLayer(weights: weights, path: "\(path).point_conv", inChannels: mid, outChannels: spec.outChannels,
                                      kernel: 1, layout: spec.projectionLayout, batchNormEps: spec.batchNormEps)
            fused = Self.invertedResidualWeights(invertedConv, depthConv, pointConv)
        }

        /// nil unless the three have `Kernels.invertedResidual`'s form: biases everywhere (a BatchNorm's
        /// shift or the conv's own), the same activation after the first two, none after the third.
        private static func invertedResidualWeights(_ expand: ConvLayer, _ depthwise: ConvLayer,
                                                    _ project: ConvLayer) -> Kernels.InvertedResidualWeights? {
            guard let expandBias = expand.bias, let depthwiseBias = depthwise.bias, let projectBias = project.bias,
                  depthwise.kernelSize == 3, expand.activation == depthwise.activation, project.activation == .none else { return nil }
            return Kernels.InvertedResidualWeights(expandWeight: expand.weight, expandBias: expandBias,
                                                   depthwiseWeight: depthwise.weight, depthwiseBias: depthwiseBias,
                                                   projectWeight: project.weight, projectBias: projectBias,
                                                   expandInt8: expand.int8Weight, projectInt8: project.int8Weight)
        }

        /// ref: ops.py MBConv.forward
        func callAsFunction(_ x: FloatTensor, plus residual: FloatTensor?, observer: ModuleObserver?) -> FloatTensor {
            if observer == nil, let fused {
                return Kernels.invertedResidual(x, weights: fused, stride: depthConv.stride, activation: invertedConv.activation,
                                                epilogue: Kernels.Epilogue(residual: residual))
            }
            var y = invertedConv(x, observer: observer)
            y = depthConv(y, observer: observer)
            y = pointConv(y, plus: residual, observer: observer)
            observer?(path, y)
            return y
        }
    }
}
