import SAMKernels
import SAMTensor

extension TinyViT {
    /// tiny_vit_sam.py PatchEmbed: two stride-2 3x3 Conv2d_BN with a GELU between, so the image
    /// side shrinks by 4 and the channels grow to embed_dims[0].
    package struct PatchEmbed: Sendable {
        package static let key = "patch_embed"
        package let path: String
        /// `seq.0`: inChannels -> embedDim / 2, 3x3, stride 2, pad 1.
        package let conv1: Conv2dBN
        /// `seq.2`: embedDim / 2 -> embedDim, 3x3, stride 2, pad 1.
        package let conv2: Conv2dBN

        package var embedDim: Int { conv2.outChannels }

        init(weights: WeightStore, path: String, inChannels: Int) throws(WeightError) {
            self.path = path
            // ref: tiny_vit_sam.py PatchEmbed.__init__ (L67-71); seq.1 is the GELU and has no weights.
            conv1 = try Conv2dBN(weights: weights, path: "\(path).seq.0", inChannels: inChannels,
                                 kernelSize: 3, stride: 2, padding: 1)
            conv2 = try Conv2dBN(weights: weights, path: "\(path).seq.2", inChannels: conv1.outChannels,
                                 kernelSize: 3, stride: 2, padding: 1)
        }

        /// Output side for an image side.
        package func outputSize(_ imageSize: Int) -> Int { conv2.outputSize(conv1.outputSize(imageSize)) }

        /// [B, inChannels, S, S] -> [B, embedDim, S/4, S/4]
        // ref: tiny_vit_sam.py PatchEmbed.forward (L73-74)
        package func callAsFunction(_ image: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
            var x = conv1(image, then: .gelu, observer: observer)
            observer?("\(path).seq.1", x)
            x = conv2(x, observer: observer)
            observer?(path, x)
            return x
        }
    }
}
