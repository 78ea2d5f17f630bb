import SAMKernels
import SAMTensor

extension TinyViT {
    /// tiny_vit_sam.py PatchMerging: the `downsample` that ends every stage but the last.
    /// 1x1 conv to the next stage's width, GELU, 3x3 depthwise conv with stride 1 or 2, GELU,
    /// 1x1 conv; takes an NCHW map (after stage 0) or tokens [B, H*W, C] (after an attention
    /// stage) and always returns tokens [B, H'*W', C'].
    package struct PatchMerging: Sendable {
        package static let key = "downsample"
        package let path: String
        /// Spatial size of the input (upstream `input_resolution`).
        package let inputResolution: GridSize
        /// 1x1, dim -> outDim
        package let conv1: Conv2dBN
        /// 3x3 depthwise over outDim, stride `stride`, pad 1
        package let conv2: Conv2dBN
        /// 1x1, outDim -> outDim
        package let conv3: Conv2dBN

        package var outDim: Int { conv3.outChannels }
        package var stride: Int { conv2.stride }
        package var outputResolution: GridSize {
            GridSize(height: conv2.outputSize(inputResolution.height), width: conv2.outputSize(inputResolution.width))
        }

        /// `stride` is not visible in the weights: MobileSAM's comes from the config (upstream:
        /// 1 when out_dim is 320, 448 or 576, else 2 — `TinyViTConfig.upstreamMergeStrides`).
        init(weights: WeightStore, path: String, dim: Int, inputResolution: GridSize, stride: Int) throws(WeightError) {
            self.path = path
            self.inputResolution = inputResolution
            // ref: tiny_vit_sam.py PatchMerging.__init__ (L126-131)
            conv1 = try Conv2dBN(weights: weights, path: "\(path).conv1", inChannels: dim, kernelSize: 1)
            conv2 = try Conv2dBN(weights: weights, path: "\(path).conv2", inChannels: conv1.outChannels,
                                 kernelSize: 3, stride: stride, padding: 1, grouping: .depthwise)
            conv3 = try Conv2dBN(weights: weights, path: "\(path).conv3", inChannels: conv1.outChannels,
                                 outChannels: conv1.outChannels, kernelSize: 1)
        }

        /// NCHW [B, dim, H, W] or tokens [B, H*W, dim] -> tokens [B, H'*W', outDim]
        // ref: tiny_vit_sam.py PatchMerging.forward (L133-147)
        package func callAsFunction(_ input: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
            var x = input
            if x.shape.count == 3 {
                // x.view(B, H, W, -1).permute(0, 3, 1, 2)
                x = Kernels.tokensToNCHW(x, height: inputResolution.height, width: inputResolution.width)
            }
            precondition(x.shape.count == 4 && x.shape[2] == inputResolution.height && x.shape[3] == inputResolution.width,
                         "\(path): input \(input.shape) does not match input resolution \(inputResolution)")
            if observer == nil, let fused = Conv2dBN.invertedResidualWeights(conv1, conv2, conv3) {
                return Kernels.nchwToTokens(Kernels.invertedResidual(x, weights: fused, stride: stride, activation: .gelu,
                                                                     epilogue: .none))
            }
            x = conv1(x, then: .gelu, observer: observer)
            observer?("\(path).act", x)          // self.act, first call
            x = conv2(x, then: .gelu, observer: observer)
            observer?("\(path).act", x)          // self.act, second call
            x = conv3(x, observer: observer)
            // x.flatten(2).transpose(1, 2)
            x = Kernels.nchwToTokens(x)
            observer?(path, x)
            return x
        }
    }
}
