import SAMKernels
import SAMTensor

/// SAM 2's image encoder in image mode: what `SAM2ImagePredictor.set_image` computes once per image
/// (and samexporter's encoder export holds). The Hiera trunk and FPN neck (`image_encoder.*`), the
/// scalp, then the decoder's high-resolution projections `mask_decoder.conv_s0`/`conv_s1` on the two
/// finest levels (`forward_image` precomputes them for every click) and `no_mem_embed` added to the
/// coarsest kept level (`directly_add_no_mem_embed`, image mode's stand-in for memory).
/// Features: `image_embed` [1, C, g, g], `high_res_feats_0` [1, C/8, 4g, 4g], `high_res_feats_1`
/// [1, C/4, 2g, 2g].
package struct SAM2ImageEncoder: ImageEncoder {
    /// Where the weights that image mode takes from outside `image_encoder.` live.
    package static let highResolutionProjections = ["mask_decoder.conv_s0", "mask_decoder.conv_s1"]
    package static let noMemoryEmbeddingKey = "no_mem_embed"

    package let path: String
    package let config: HieraConfig
    package let trunk: Hiera
    package let neck: FpnNeck
    /// conv_s0 (finest level, d -> d/8) and conv_s1 (next, d -> d/4); empty without high-res features.
    package let highResolutionConvs: [NN.Conv2d]
    /// conv_s0 and conv_s1 composed with the neck's 1x1 conv of their level, when neither level fuses
    /// a coarser one (fpn_top_down_levels [2, 3] in every published config): the neck's 256-channel
    /// maps of the two finest levels feed nothing else in image mode, so each level is one product
    /// from the trunk's channels straight to d/8 or d/4 (SAM 2.1 tiny: 96 -> 32 instead of 96 -> 256
    /// -> 32 over 256x256 positions; 6 of the encoder's ~280 GFLOP). Empty where it does not apply.
    let foldedHighResolutionConvs: [NN.Conv2d]
    /// `no_mem_embed` [1, 1, d] as a channel bias [d]; nil when image mode does not add it.
    package let noMemoryEmbedding: FloatTensor?

    /// ref: sam2/modeling/sam2_base.py SAM2Base.__init__, _build_sam_heads; image_encoder.py ImageEncoder
    package init(weights: WeightStore, prefix: String, config: HieraConfig) throws(WeightError) {
        path = prefix
        self.config = config
        trunk = try Hiera(weights: weights, path: modulePath(prefix, Hiera.key), config: config)
        neck = try FpnNeck(weights: weights, path: modulePath(prefix, FpnNeck.key), channels: config.stageDims,
                           dModel: config.neckDim, topDownLevels: config.fpnTopDownLevels)
        let levels = config.keptLevels
        guard levels >= 1, config.scalp >= 0 else {
            throw .invalid(key: prefix, reason: "scalp \(config.scalp) leaves no level of \(config.stages.count)", source: weights.source)
        }
        let d = config.neckDim
        if config.highResolutionFeatures {
            guard levels >= 3 else {
                throw .invalid(key: prefix, reason: "high-resolution features need 3 kept levels, the config keeps \(levels)",
                               source: weights.source)
            }
            // ref: mask_decoder.py MaskDecoder.__init__ — conv_s0: Conv2d(d, d // 8, 1), conv_s1: Conv2d(d, d // 4, 1)
            highResolutionConvs = try zip(Self.highResolutionProjections, [8, 4]).map { (key, divisor) throws(WeightError) in
                try NN.Conv2d(weights: weights, path: key, inChannels: d, outChannels: d / divisor, kernel: 1, stride: 1)
            }
        } else {
            highResolutionConvs = []
        }
        let (neckConvs, topDown, projections) = (neck.convs, neck.topDownLevels, highResolutionConvs)
        foldedHighResolutionConvs = projections.indices.contains { topDown.contains($0) } ? []
            : projections.enumerated().map { level, conv in NN.Conv2d.composed(conv, after: neckConvs[neckConvs.count - 1 - level]) }
        noMemoryEmbedding = config.addNoMemoryEmbedding
            ? try weights.take(Self.noMemoryEmbeddingKey, shape: [1, 1, d]).reshaped([d]) : nil
    }

    package var inputShapeDescription: String { "[1, \(config.inChannels), \(config.imageSize), \(config.imageSize)]" }

    /// ref: sam2_image_predictor.py SAM2ImagePredictor.set_image — forward_image (trunk, neck,
    /// conv_s0/conv_s1), _prepare_backbone_features, vision_feats[-1] + no_mem_embed
    package func features(_ image: FloatTensor, observer: ModuleObserver?) throws(ImageEncoderError) -> ImageFeatures {
        try features(image, addingNoMemoryEmbedding: true, observer: observer)
    }

    /// The features as video mode takes them (`forward_image`, `_prepare_backbone_features`): the
    /// coarsest map without `no_mem_embed` (only a frame tracked without memory adds it).
    /// ref: sam2/sam2_video_predictor.py _get_image_feature
    package func trackingFeatures(_ image: FloatTensor, observer: ModuleObserver? = nil) throws(ImageEncoderError) -> ImageFeatures {
        try features(image, addingNoMemoryEmbedding: false, observer: observer)
    }

    func features(_ image: FloatTensor, addingNoMemoryEmbedding: Bool, observer: ModuleObserver?) throws(ImageEncoderError) -> ImageFeatures {
        let shape = image.shape
        guard shape.count == 4, shape[0] == 1, shape[1] == config.inChannels, shape[2] == config.imageSize,
              shape[3] == config.imageSize else {
            throw .imageShape(expected: inputShapeDescription, actual: shape)
        }
        let levels = trunk(image, observer: observer)
        // The neck and conv_s0/conv_s1 are one stage to a stage observer (`StageObservation`).
        let neckObserver = StageObservation.observer(for: observer)
        // ref: image_encoder.py ImageEncoder.forward — features[: -self.scalp]
        let folded = foldedHighResolutionConvs.count
        // ref: sam2_base.py forward_image — backbone_fpn[0] = conv_s0(...), backbone_fpn[1] = conv_s1(...)
        let highResolution: [FloatTensor]
        var fpn: [FloatTensor]
        if folded > 0 {
            // An observer is shown the neck's finest levels and conv_s0/conv_s1 as upstream runs them;
            // the features themselves come from the folded convs either way.
            fpn = neck(levels, keep: config.keptLevels, from: neckObserver == nil ? folded : 0, observer: neckObserver)
            if let observer = neckObserver {
                for (level, conv) in highResolutionConvs.enumerated() { _ = conv(fpn[level], observer: observer) }
                fpn.removeFirst(folded)
            }
            highResolution = foldedHighResolutionConvs.enumerated().map { level, conv in conv(levels[level]) }
        } else {
            fpn = neck(levels, keep: config.keptLevels, observer: neckObserver)
            highResolution = highResolutionConvs.enumerated().map { level, conv in conv(fpn[level], observer: neckObserver) }
        }
        var embedding = fpn.removeLast()
        if addingNoMemoryEmbedding, let noMemoryEmbedding {
            // ref: set_image — vision_feats[-1] = vision_feats[-1] + self.model.no_mem_embed (per channel)
            Kernels.addBias(&embedding, channelBias: noMemoryEmbedding)
        }
        StageObservation.finished(neck.path, embedding, observer)
        return ImageFeatures(embedding: embedding, highResolution: highResolution)
    }
}
