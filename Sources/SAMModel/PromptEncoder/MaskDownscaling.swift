import SAMKernels
import SAMTensor

/// `prompt_encoder.mask_downscaling`, the nn.Sequential that turns a [1, 1, 4g, 4g] mask into a
/// [1, C, g, g] embedding: Conv 2x2/2 → LayerNorm2d → GELU → Conv 2x2/2 → LayerNorm2d → GELU → Conv 1x1.
/// The two GELUs (indices 2 and 5) hold no weights.
package struct MaskDownscaling: Sendable {
    package let path: String
    /// Index 0: 1 → maskInChannels / 4, kernel 2, stride 2.
    package let conv0: NN.Conv2d
    package let norm1: NN.LayerNorm2d
    /// Index 3: maskInChannels / 4 → maskInChannels, kernel 2, stride 2.
    package let conv3: NN.Conv2d
    package let norm4: NN.LayerNorm2d
    /// Index 6: maskInChannels → embedDim, kernel 1.
    package let conv6: NN.Conv2d

    /// ref: prompt_encoder.py PromptEncoder.__init__ (mask_downscaling)
    package init(weights: WeightStore, path: String, maskInChannels: Int, embedDim: Int) throws(WeightError) {
        self.path = path
        guard maskInChannels % 4 == 0, maskInChannels > 0 else {
            throw .invalid(key: "\(path).3.weight", reason: "mask_in_chans \(maskInChannels) is not a positive multiple of 4",
                           source: weights.source)
        }
        conv0 = try NN.Conv2d(weights: weights, path: "\(path).0", inChannels: 1, outChannels: maskInChannels / 4, kernel: 2, stride: 2)
        norm1 = try NN.LayerNorm2d(weights: weights, path: "\(path).1", channels: maskInChannels / 4)
        conv3 = try NN.Conv2d(weights: weights, path: "\(path).3", inChannels: maskInChannels / 4, outChannels: maskInChannels,
                              kernel: 2, stride: 2)
        norm4 = try NN.LayerNorm2d(weights: weights, path: "\(path).4", channels: maskInChannels)
        conv6 = try NN.Conv2d(weights: weights, path: "\(path).6", inChannels: maskInChannels, outChannels: embedDim, kernel: 1, stride: 1)
    }

    /// ref: prompt_encoder.py PromptEncoder._embed_masks (self.mask_downscaling(masks))
    package func callAsFunction(_ mask: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
        var x = conv0(mask, observer: observer)
        norm1(&x, observer: observer)
        Kernels.gelu(&x)
        observer?("\(path).2", x)
        x = conv3(x, observer: observer)
        norm4(&x, observer: observer)
        Kernels.gelu(&x)
        observer?("\(path).5", x)
        x = conv6(x, observer: observer)
        observer?(path, x)
        return x
    }
}
