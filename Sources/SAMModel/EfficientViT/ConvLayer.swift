import SAMKernels
import SAMTensor

/// EfficientViT-SAM's modules (efficientsam/models/nn/ops.py), each knowing its state-dict path.
package enum EfficientViT {}

extension EfficientViT {
    /// ops.py ConvLayer (`path.conv`, `path.norm`, `path.act`): a square Conv2d with padding k / 2,
    /// a BatchNorm2d when it has one (folded into the convolution at load, in double precision), then
    /// tanh GELU when it has one. A conv carries a bias of its own only where upstream sets `use_bias`.
    package struct ConvLayer: Sendable {
        package let path: String
        /// [out, in / groups, k, k], the BatchNorm's scale folded in.
        package let weight: FloatTensor
        /// The conv's bias and / or the folded BatchNorm's shift; nil for a bias-free conv without norm.
        package let bias: FloatTensor?
        /// A pointwise convolution stored int8 (`samconvert --dtype int8`): its codes as an [out, in]
        /// matrix, a BatchNorm's scale folded into the row scales, for int8 products.
        package let int8Weight: QuantizedWeight?
        package let stride: Int
        package let groups: Int
        package let hasNorm: Bool
        package let activation: Kernels.Epilogue.Activation

        package var outChannels: Int { weight.shape[0] }
        package var kernelSize: Int { weight.shape[2] }
        package var padding: Int { kernelSize / 2 }

        /// What a ConvLayer holds, as upstream builds it.
        struct Layout {
            var bias: Bool
            var norm: Bool
            var activation: Kernels.Epilogue.Activation
        }

        /// `outChannels` nil reads the width from `path.conv.weight`; `groups` nil makes it depthwise (groups = in = out).
        /// ref: ops.py ConvLayer.__init__ (padding get_same_padding(k) = k // 2, bias=use_bias, build_norm, build_act)
        init(weights: WeightStore, path: String, inChannels: Int, outChannels: Int?, kernel: Int, stride: Int = 1,
             groups: Int? = 1, layout: Layout, batchNormEps: Double) throws(WeightError) {
            self.path = path
            let weightKey = "\(path).conv.weight"
            let groupCount = groups ?? inChannels
            let out = groups == nil ? inChannels : outChannels
            let weight = try NN.take(weightKey, shape: [out, inChannels / max(groupCount, 1), kernel, kernel], from: weights)
            guard groupCount >= 1, inChannels % groupCount == 0, weight.shape[0] % groupCount == 0 else {
                throw .invalid(key: weightKey, reason: "\(inChannels) input channels do not split into \(groupCount) groups",
                               source: weights.source)
            }
            let channels = weight.shape[0]
            // A pointwise convolution is a matrix the model multiplies by (`samconvert --dtype int8|q4` quantizes it).
            let isPointwise = kernel == 1 && groupCount == 1 && inChannels > 1
            if isPointwise { weights.noteMatrix(weightKey) }
            let codes = isPointwise ? weights.int8Codes(weightKey) : nil
            let convBias = try layout.bias ? weights.take("\(path).conv.bias", shape: [channels]) : nil
            if !layout.norm {
                (self.weight, bias, int8Weight) = (weight, convBias, codes?.int8Matrix(rowScaleFactors: nil))
            } else if !layout.bias, !weights.contains("\(path).norm.running_var"), weights.contains("\(path).conv.bias") {
                // Already folded by an exporter: the conv's bias is the BatchNorm's shift.
                let shift = try weights.take("\(path).conv.bias", shape: [channels])
                (self.weight, bias, int8Weight) = (weight, shift, codes?.int8Matrix(rowScaleFactors: nil))
            } else {
                // ref: torch.nn.BatchNorm2d eval: (x - running_mean) / sqrt(running_var + eps) * weight + bias
                let norm = "\(path).norm"
                let gamma = try weights.take("\(norm).weight", shape: [channels])
                let beta = try weights.take("\(norm).bias", shape: [channels])
                let mean = try weights.take("\(norm).running_mean", shape: [channels])
                let variance = try weights.take("\(norm).running_var", shape: [channels])
                let folded = WeightStore.foldBatchNorm(weight: weight, convBias: convBias, gamma: gamma, beta: beta,
                                                       mean: mean, variance: variance, eps: batchNormEps)
                (self.weight, bias, int8Weight) = (folded.weight, folded.bias, codes?.int8Matrix(rowScaleFactors: folded.scales))
            }
            self.stride = stride
            self.groups = groupCount
            hasNorm = layout.norm
            activation = layout.activation
        }

        /// Output side for an input side (PyTorch's floor((n + 2p - k) / s) + 1).
        package func outputSide(_ side: Int) -> Int { (side + 2 * padding - kernelSize) / stride + 1 }

        /// NCHW -> NCHW. `residual` (added after the layer, for the ResidualBlock around a block whose
        /// last layer this is) is fused into the convolution when nobody observes; an observed run
        /// reports the layer's own outputs and leaves the add to the caller, as PyTorch's hooks see it.
        /// ref: ops.py ConvLayer.forward — conv, norm, act
        func callAsFunction(_ x: FloatTensor, plus residual: FloatTensor? = nil, observer: ModuleObserver?) -> FloatTensor {
            precondition(residual == nil || activation == .none, "\(path): a residual is added after the activation")
            guard let observer else {
                return Kernels.conv2d(x, weight: weight, bias: bias, stride: stride, padding: padding, groups: groups,
                                      epilogue: Kernels.Epilogue(residual: residual, activation: activation), int8: int8Weight)
            }
            var y = Kernels.conv2d(x, weight: weight, bias: bias, stride: stride, padding: padding, groups: groups, int8: int8Weight)
            // With its BatchNorm folded, the conv's output is the norm's.
            observer(hasNorm ? "\(path).norm" : "\(path).conv", y)
            if activation != .none {
                Kernels.applyEpilogue(Kernels.Epilogue(activation: activation), to: &y)
                observer("\(path).act", y)
            }
            observer(path, y)
            return y
        }
    }
}
