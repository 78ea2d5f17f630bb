import SAMKernels
import SAMTensor

extension TinyViT {
    /// tiny_vit_sam.py MBConv: inverted residual block of stage 0 (1x1 expand, 3x3 depthwise,
    /// 1x1 project, residual add, GELU), on NCHW maps; channel count is unchanged.
    package struct MBConv: Sendable {
        package let path: String
        /// 1x1, dim -> hidden (= dim * mbconv_expand_ratio)
        package let conv1: Conv2dBN
        /// 3x3 depthwise over hidden channels, pad 1
        package let conv2: Conv2dBN
        /// 1x1, hidden -> dim
        package let conv3: Conv2dBN

        package var dim: Int { conv3.outChannels }
        package var hiddenDim: Int { conv1.outChannels }

        init(weights: WeightStore, path: String, dim: Int) throws(WeightError) {
            self.path = path
            // ref: tiny_vit_sam.py MBConv.__init__ (L85-93)
            conv1 = try Conv2dBN(weights: weights, path: "\(path).conv1", inChannels: dim, kernelSize: 1)
            conv2 = try Conv2dBN(weights: weights, path: "\(path).conv2", inChannels: conv1.outChannels,
                                 kernelSize: 3, stride: 1, padding: 1, grouping: .depthwise)
            conv3 = try Conv2dBN(weights: weights, path: "\(path).conv3", inChannels: conv1.outChannels,
                                 outChannels: dim, kernelSize: 1)
        }

        /// [B, dim, H, W] -> [B, dim, H, W]
        // ref: tiny_vit_sam.py MBConv.forward (L99-115); drop_path is the identity at inference.
        package func callAsFunction(_ x: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
            // Unobserved, the three convolutions run row by row, so the 4x-wide hidden maps stay in cache.
            if observer == nil, let fused = Conv2dBN.invertedResidualWeights(conv1, conv2, conv3) {
                return Kernels.invertedResidual(x, weights: fused, stride: conv2.stride, activation: .gelu,
                                                epilogue: Kernels.Epilogue(residual: x, activation: .gelu))
            }
            var y = conv1(x, then: .gelu, observer: observer)
            observer?("\(path).act1", y)
            y = conv2(y, then: .gelu, observer: observer)
            observer?("\(path).act2", y)
            // x += shortcut, then act3
            y = conv3(y, then: Kernels.Epilogue(residual: x, activation: .gelu), observer: observer)
            observer?("\(path).act3", y)
            observer?(path, y)
            return y
        }
    }
}
