import SAMKernels
import SAMTensor

extension TinyViT {
    /// tiny_vit_sam.py Conv2d_BN: a bias-free Conv2d followed by an eval-mode BatchNorm2d
    /// (`path.c`, `path.bn`), folded into one convolution with bias when loaded (`Conv2d_BN.fuse`).
    package struct Conv2dBN: Sendable {
        package enum Grouping: Sendable { case dense, depthwise }

        package let path: String
        /// [out, in/groups, k, k] with the BatchNorm scale folded in.
        package let weight: FloatTensor
        /// [out]: the BatchNorm shift (beta - mean * scale).
        package let bias: FloatTensor
        /// A pointwise convolution stored int8 (`samconvert --dtype int8`): its codes as an [out, in]
        /// matrix, the BatchNorm scale folded into the row scales, for int8 products.
        package let int8Weight: QuantizedWeight?
        package let stride: Int
        package let padding: Int
        package let groups: Int

        package var outChannels: Int { weight.shape[0] }
        package var kernelSize: Int { weight.shape[2] }

        /// Loads a square convolution over `inChannels` inputs. `outChannels` and `kernelSize` are
        /// read from `path.c.weight` when nil; `padding` nil means `kernelSize / 2`. A depthwise
        /// convolution has groups = out = in channels.
        init(weights: WeightStore, path: String, inChannels: Int, outChannels: Int? = nil,
             kernelSize: Int? = nil, stride: Int = 1, padding: Int? = nil,
             grouping: Grouping = .dense) throws(WeightError) {
            let shape = try weights.requireShape("\(path).c.weight")
            let out = grouping == .depthwise ? inChannels : (outChannels ?? shape.first ?? 0)
            let k = kernelSize ?? (shape.count == 4 ? shape[2] : 0)
            let expected = [out, grouping == .depthwise ? 1 : inChannels, k, k]
            (weight, bias, int8Weight) = try weights.takeConvBN(path, weightShape: expected)
            self.path = path
            self.stride = stride
            self.padding = padding ?? k / 2
            groups = grouping == .depthwise ? inChannels : 1
        }

        /// Output side for an input side (PyTorch's floor((n + 2p - k) / s) + 1).
        package func outputSize(_ inputSize: Int) -> Int {
            (inputSize + 2 * padding - kernelSize) / stride + 1
        }

        /// The depthwise, stride-1, size-keeping convolution on a channels-last map: tokens
        /// [B, H*W, C] -> [B, H*W, C], as TinyViTBlock's local_conv, without transposing to NCHW.
        /// An observer sees the NCHW output, as PyTorch's module gives it.
        package func onTokens(_ x: FloatTensor, height: Int, width: Int, observer: ModuleObserver? = nil) -> FloatTensor {
            precondition(groups == outChannels && stride == 1 && 2 * padding == kernelSize - 1,
                         "\(path): onTokens needs a depthwise stride-1 size-keeping convolution")
            let y = Kernels.depthwiseConvTokens(x, height: height, width: width, weight: weight, bias: bias, padding: padding)
            observer?(path, Kernels.tokensToNCHW(y, height: height, width: width))
            return y
        }

        /// NCHW -> NCHW, then `epilogue` (the residual add / activation that follows upstream).
        /// (PyTorch's output of `path` equals that of `path.bn`.) The epilogue is fused into the
        /// convolution unless an observer wants the output before it.
        package func callAsFunction(_ x: FloatTensor, then epilogue: Kernels.Epilogue = .none,
                                   observer: ModuleObserver? = nil) -> FloatTensor {
            guard let observer else {
                return Kernels.conv2d(x, weight: weight, bias: bias, stride: stride, padding: padding, groups: groups,
                                      epilogue: epilogue, int8: int8Weight)
            }
            var y = Kernels.conv2d(x, weight: weight, bias: bias, stride: stride, padding: padding, groups: groups, int8: int8Weight)
            observer(path, y)
            Kernels.applyEpilogue(epilogue, to: &y)
            return y
        }
    }
}

extension TinyViT.Conv2dBN {
    /// The weights of `expand` (1x1) → `depthwise` (3x3, pad 1) → `project` (1x1) for
    /// `Kernels.invertedResidual`, which runs MBConv's and PatchMerging's three convolutions
    /// row by row in cache; nil when the three do not have exactly that form.
    static func invertedResidualWeights(_ expand: Self, _ depthwise: Self, _ project: Self) -> Kernels.InvertedResidualWeights? {
        func isPointwise(_ c: Self) -> Bool { c.kernelSize == 1 && c.stride == 1 && c.padding == 0 && c.groups == 1 }
        guard isPointwise(expand), isPointwise(project), depthwise.kernelSize == 3, depthwise.padding == 1,
              depthwise.groups == expand.outChannels, depthwise.outChannels == expand.outChannels,
              project.weight.shape[1] == expand.outChannels else { return nil }
        return Kernels.InvertedResidualWeights(expandWeight: expand.weight, expandBias: expand.bias,
                                               depthwiseWeight: depthwise.weight, depthwiseBias: depthwise.bias,
                                               projectWeight: project.weight, projectBias: project.bias,
                                               expandInt8: expand.int8Weight, projectInt8: project.int8Weight)
    }
}
