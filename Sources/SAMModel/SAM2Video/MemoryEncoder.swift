import SAMKernels
import SAMTensor

/// SAM 2's memory encoder (`memory_encoder`): a frame's memory from its features and its mask. The
/// mask (already scaled, see `SAM2VideoModules.encodeMemory`) is downsampled by strided convs to the
/// feature grid, added to the projected features, fused by ConvNeXt blocks and projected to the
/// memory width; the memory's position encoding is the sine encoding of its grid.
/// ref: sam2/modeling/memory_encoder.py MemoryEncoder, MaskDownSampler, Fuser, CXBlock
package struct MemoryEncoder: Sendable {
    /// One ConvNeXt block: depthwise conv, LayerNorm2d, pointwise MLP (GELU), layer scale, residual.
    package struct CXBlock: Sendable {
        package let path: String
        package let dwconv: FloatTensor
        package let dwconvBias: FloatTensor
        package let padding: Int
        package let norm: NN.LayerNorm2d
        package let pwconv1: NN.Linear
        package let pwconv2: NN.Linear
        /// `gamma` [C]; nil when the block has no layer scale.
        package let gamma: FloatTensor?

        init(weights: WeightStore, path: String, dim: Int, kernel: Int, padding: Int) throws(WeightError) {
            self.path = path
            dwconv = try weights.take("\(path).dwconv.weight", shape: [dim, 1, kernel, kernel])
            dwconvBias = try weights.take("\(path).dwconv.bias", shape: [dim])
            self.padding = padding
            norm = try NN.LayerNorm2d(weights: weights, path: "\(path).norm", channels: dim, eps: 1e-6)
            pwconv1 = try NN.Linear(weights: weights, path: "\(path).pwconv1", inFeatures: dim, outFeatures: nil)
            pwconv2 = try NN.Linear(weights: weights, path: "\(path).pwconv2", inFeatures: pwconv1.outFeatures, outFeatures: dim)
            gamma = try weights.takeIfPresent("\(path).gamma", shape: [dim])
        }

        /// ref: CXBlock.forward
        func callAsFunction(_ x: FloatTensor, observer: ModuleObserver?) -> FloatTensor {
            let (channels, height, width) = (x.shape[1], x.shape[2], x.shape[3])
            var y = Kernels.conv2d(x, weight: dwconv, bias: dwconvBias, padding: padding, groups: channels)
            norm(&y)
            // ref: permute to (N, H, W, C); pwconv1; GELU; pwconv2; gamma *; permute back
            var tokens = pwconv2(pwconv1(Kernels.nchwToTokens(y), then: .gelu))
            if let gamma {
                tokens.data.withUnsafeMutableBufferPointer { values in
                    for row in 0..<(height * width) {
                        for c in 0..<channels { values[row * channels + c] *= gamma.data[c] }
                    }
                }
            }
            var out = Kernels.tokensToNCHW(tokens.reshaped([1, height * width, channels]), height: height, width: width)
            // ref: x = input + drop_path(x)
            Kernels.add(&out, x)
            observer?(path, out)
            return out
        }
    }

    package let path: String
    /// `mask_downsampler.encoder`: (conv, LayerNorm2d, GELU) per downsampling, then a 1x1 conv.
    package let downsamplerConvs: [NN.Conv2d]
    package let downsamplerNorms: [NN.LayerNorm2d]
    package let downsamplerProjection: NN.Conv2d
    package let pixelProjection: NN.Conv2d
    package let fuser: [CXBlock]
    /// `fuser.proj`: a 1x1 conv when the fuser projects its input; nil for nn.Identity.
    package let fuserProjection: NN.Conv2d?
    /// `out_proj`: nil when the memory keeps the features' width (nn.Identity).
    package let outProjection: NN.Conv2d?
    package let positionEncoding: PositionEmbeddingSine

    package var memoryDim: Int { outProjection?.outChannels ?? pixelProjection.outChannels }

    package init(weights: WeightStore, path: String, config: SAM2VideoConfig, featureDim: Int) throws(WeightError) {
        self.path = path
        let stride = config.maskDownsamplerStride
        var layers = 0, product = 1
        while product < config.maskDownsamplerTotalStride { product *= stride; layers += 1 }
        guard stride >= 2, product == config.maskDownsamplerTotalStride else {
            throw .invalid(key: "\(path).mask_downsampler", reason: "total stride \(config.maskDownsamplerTotalStride) is not a power "
                           + "of stride \(stride)", source: weights.source)
        }
        var convs: [NN.Conv2d] = [], norms: [NN.LayerNorm2d] = [], channels = 1
        for layer in 0..<layers {
            // ref: MaskDownSampler.__init__ — mask_out_chans = mask_in_chans * stride ** 2
            let out = channels * stride * stride
            convs.append(try NN.Conv2d(weights: weights, path: "\(path).mask_downsampler.encoder.\(3 * layer)", inChannels: channels,
                                       outChannels: out, kernel: config.maskDownsamplerKernel, stride: stride,
                                       padding: config.maskDownsamplerPadding))
            norms.append(try NN.LayerNorm2d(weights: weights, path: "\(path).mask_downsampler.encoder.\(3 * layer + 1)", channels: out))
            channels = out
        }
        downsamplerConvs = convs
        downsamplerNorms = norms
        downsamplerProjection = try NN.Conv2d(weights: weights, path: "\(path).mask_downsampler.encoder.\(3 * layers)",
                                              inChannels: channels, outChannels: featureDim, kernel: 1, stride: 1)
        pixelProjection = try NN.Conv2d(weights: weights, path: "\(path).pix_feat_proj", inChannels: featureDim, outChannels: featureDim,
                                        kernel: 1, stride: 1)
        let blocks = NN.childCount("\(path).fuser.layers", in: weights)
        fuser = try (0..<blocks).map { (index) throws(WeightError) in
            try CXBlock(weights: weights, path: "\(path).fuser.layers.\(index)", dim: featureDim, kernel: config.fuserKernel,
                        padding: config.fuserPadding)
        }
        fuserProjection = weights.contains("\(path).fuser.proj.weight")
            ? try NN.Conv2d(weights: weights, path: "\(path).fuser.proj", inChannels: featureDim, outChannels: featureDim, kernel: 1, stride: 1)
            : nil
        outProjection = weights.contains("\(path).out_proj.weight")
            ? try NN.Conv2d(weights: weights, path: "\(path).out_proj", inChannels: featureDim, outChannels: config.memoryDim, kernel: 1, stride: 1)
            : nil
        positionEncoding = PositionEmbeddingSine(channels: outProjection?.outChannels ?? featureDim)
    }

    /// features [1, C, h, w] and the scaled mask [1, 1, S, S] -> the memory [1, mem_dim, h, w]. Its
    /// position encoding is the same for every memory: `positionEncoding`, made once by the caller.
    /// ref: MemoryEncoder.forward (skip_mask_sigmoid=True)
    package func callAsFunction(features: FloatTensor, mask: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
        var m = mask
        for (conv, norm) in zip(downsamplerConvs, downsamplerNorms) {
            m = conv(m)
            norm(&m)
            Kernels.gelu(&m)
        }
        m = downsamplerProjection(m)
        observer?("\(path).mask_downsampler", m)
        // ref: x = pix_feat_proj(pix_feat) + masks
        var x = Kernels.conv2d(features, weight: pixelProjection.weight, bias: pixelProjection.bias, epilogue: Kernels.Epilogue(residual: m))
        if let fuserProjection { x = fuserProjection(x) }
        for block in fuser { x = block(x, observer: observer) }
        if let outProjection { x = outProjection(x) }
        observer?(path, x)
        return x
    }
}
