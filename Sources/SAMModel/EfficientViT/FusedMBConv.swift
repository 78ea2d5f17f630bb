import SAMKernels
import SAMTensor

extension EfficientViT {
    /// ops.py FusedMBConv (`spatial_conv`, `point_conv`): k x k (in -> mid, stride s, GELU), then 1x1 (mid -> out).
    package struct FusedMBConv: Sendable {
        package let path: String
        package let spatialConv: ConvLayer
        package let pointConv: ConvLayer

        package var outChannels: Int { pointConv.outChannels }

        /// ref: ops.py FusedMBConv.__init__ (mid = round(in * expand)); backbone.py build_local_block "fmb"
        init(weights: WeightStore, path: String, spec: LocalBlockSpec) throws(WeightError) {
            self.path = path
            spatialConv = try ConvLayer(weights: weights, path: "\(path).spatial_conv", inChannels: spec.inChannels, outChannels: nil,
                                        kernel: 3, stride: spec.stride, layout: spec.expansionLayout, batchNormEps: spec.batchNormEps)
            try spec.requireMidChannels(spatialConv.outChannels, key: "\(path).spatial_conv.conv.weight", source: weights.source)
            pointConv = try ConvLayer(weights: weights, path: "\(path).point_conv", inChannels: spatialConv.outChannels,
                                      outChannels: spec.outChannels, kernel: 1, layout: spec.projectionLayout,
                                      batchNormEps: spec.batchNormEps)
        }

        /// ref: ops.py FusedMBConv.forward
        func callAsFunction(_ x: FloatTensor, plus residual: FloatTensor?, observer: ModuleObserver?) -> FloatTensor {
            let hidden = spatialConv(x, observer: observer)
            let y = pointConv(hidden, plus: residual, observer: observer)
            observer?(path, y)
            return y
        }
    }
}
