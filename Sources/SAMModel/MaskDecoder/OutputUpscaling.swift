import SAMKernels
import SAMTensor

/// `mask_decoder.output_upscaling`, an nn.Sequential: ConvTranspose2d 2x2/2 (C → C/4) → LayerNorm2d →
/// GELU → ConvTranspose2d 2x2/2 (C/4 → C/8) → GELU, taking [1, C, g, g] to [1, C/8, 4g, 4g].
/// The GELUs (indices 2 and 4) hold no weights.
package struct OutputUpscaling: Sendable {
    package let path: String
    package let convTranspose0: NN.ConvTranspose2d
    package let norm1: NN.LayerNorm2d
    package let convTranspose3: NN.ConvTranspose2d
    /// The same weights packed for the fused `masks(imageTokens:…)`.
    let head: Kernels.MaskHeadWeights

    /// ref: mask_decoder.py MaskDecoder.__init__ (output_upscaling)
    package init(weights: WeightStore, path: String, transformerDim: Int) throws(WeightError) {
        self.path = path
        guard transformerDim % 8 == 0 else {
            throw .invalid(key: "\(path).0.weight", reason: "transformer dim \(transformerDim) is not a multiple of 8", source: weights.source)
        }
        convTranspose0 = try NN.ConvTranspose2d(weights: weights, path: "\(path).0", inChannels: transformerDim,
                                                outChannels: transformerDim / 4, kernel: 2, stride: 2)
        norm1 = try NN.LayerNorm2d(weights: weights, path: "\(path).1", channels: transformerDim / 4)
        convTranspose3 = try NN.ConvTranspose2d(weights: weights, path: "\(path).3", inChannels: transformerDim / 4,
                                                outChannels: transformerDim / 8, kernel: 2, stride: 2)
        head = Kernels.MaskHeadWeights(firstWeight: convTranspose0.weight, firstBias: convTranspose0.bias,
                                       normWeight: norm1.weight, normBias: norm1.bias, normEps: norm1.eps,
                                       secondWeight: convTranspose3.weight, secondBias: convTranspose3.bias)
    }

    /// ref: mask_decoder.py MaskDecoder.predict_masks — upscaled_embedding = self.output_upscaling(src)
    package func callAsFunction(_ x: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
        var y = convTranspose0(x, observer: observer)
        norm1(&y, observer: observer)
        Kernels.gelu(&y)
        observer?("\(path).2", y)
        y = convTranspose3(y, then: .gelu, observer: observer)
        observer?("\(path).4", y)
        observer?(path, y)
        return y
    }

    /// This module and the hypernetwork product in one pass: masks [1, M, 4h, 4w] from the
    /// image tokens [1, h*w, C] and hypernetwork [M, C/8] (`Kernels.maskHead`), without the
    /// NCHW transpose and the [C/8, 4h, 4w] map between them. Equal, to float rounding, to
    /// `callAsFunction` followed by the product (SAMKernelsTests "Fused mask head").
    /// ref: mask_decoder.py MaskDecoder.predict_masks — upscaled_embedding = self.output_upscaling(src);
    /// masks = (hyper_in @ upscaled_embedding.view(b, c, h * w)).view(b, -1, h, w)
    package func masks(imageTokens: FloatTensor, height: Int, width: Int, hypernetwork: FloatTensor) -> FloatTensor {
        Kernels.maskHead(tokens: imageTokens, height: height, width: width, weights: head, hypernetwork: hypernetwork)
    }
}
