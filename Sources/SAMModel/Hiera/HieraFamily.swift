import SAMTensor

/// SAM 2 / 2.1's Hiera image encoder (tiny, small, base_plus, large) as an image-encoder family.
package enum HieraFamily: ImageEncoderFamily {
    package static let name = "hiera"
    /// Image mode applies the decoder's high-resolution projections and `no_mem_embed` once per image.
    package static let keysOutsideEncoder = SAM2ImageEncoder.highResolutionProjections.map { $0 + "." }
        + [SAM2ImageEncoder.noMemoryEmbeddingKey]

    package static func makeEncoder(weights: WeightStore, prefix: String, config: HieraConfig) throws(WeightError) -> any ImageEncoder {
        try SAM2ImageEncoder(weights: weights, prefix: prefix, config: config)
    }

    /// Width, depth, stage lengths (a stage starts where a block has a shortcut `proj`), MLP ratio,
    /// the background position embedding's size, stage 1's window (`pos_embed_window`) and the neck
    /// width from the shapes. Heads, the other windows and the global blocks are in no shape: they
    /// come from `base` when it has the same width and stages, else from the published model that
    /// has, else from `base` or Hiera's defaults. Image size comes from `facts`, else `base`, else 1024.
    /// ref: sam2/modeling/backbones/hieradet.py Hiera.__init__; sam2/configs/sam2.1/*.yaml
    package static func inferConfiguration(fromShapes shapes: [String: [Int]], facts: EncoderFacts,
                                          base: HieraConfig?) -> HieraConfig? {
        let trunk = "image_encoder.trunk"
        guard let patch = shapes["\(trunk).patch_embed.proj.weight"], patch.count == 4 else { return nil }
        let depth = ShapeQueries.childCount("\(trunk).blocks", in: shapes)
        guard depth > 0 else { return nil }
        // Stage lengths: a block with a `proj` starts a new stage.
        var stages: [Int] = [0]
        for index in 0..<depth {
            if index > 0, shapes["\(trunk).blocks.\(index).proj.weight"] != nil { stages.append(0) }
            stages[stages.count - 1] += 1
        }
        let dim = patch[0]
        let published = HieraConfig.published.first { $0.embedDim == dim && $0.stages == stages }
        // A base of other widths or stages (SAM 2.1 tiny's, when nothing else is known) yields to the
        // published model the shapes name.
        let fittingBase = base.flatMap { $0.embedDim == dim && $0.stages == stages ? $0 : nil }
        var config = fittingBase ?? published ?? base ?? HieraConfig(embedDim: dim, numHeads: 1, stages: stages, globalAttentionBlocks: [])
        config.embedDim = dim
        config.inChannels = patch[1]
        config.stages = stages
        if config.windowSpec.count != stages.count {
            config.windowSpec = Array((published ?? .tiny).windowSpec.prefix(stages.count))
        }
        config.queryPoolStages = min(config.queryPoolStages, stages.count - 1)
        config.imageSize = facts.imageSize ?? base?.imageSize ?? 1024
        if let background = shapes["\(trunk).pos_embed"], background.count == 4 {
            config.positionEmbeddingSize = [background[2], background[3]]
        }
        if let window = shapes["\(trunk).pos_embed_window"], window.count == 4, !config.windowSpec.isEmpty {
            config.windowSpec[0] = window[2]
        }
        if let hidden = shapes["\(trunk).blocks.0.mlp.layers.0.weight"], dim > 0 { config.mlpRatio = Double(hidden[0]) / Double(dim) }
        if let conv = shapes["image_encoder.neck.convs.0.conv.weight"], conv.count == 4 { config.neckDim = conv[0] }
        // Encoder-only and decoder-only exports split these between them: present means used.
        config.highResolutionFeatures = shapes["mask_decoder.conv_s0.weight"] != nil || (base?.highResolutionFeatures ?? true)
        if shapes[SAM2ImageEncoder.noMemoryEmbeddingKey] != nil { config.addNoMemoryEmbedding = true }
        return config
    }
}

extension HieraConfig: ImageEncoderConfiguration {
    package var embeddingDim: Int { neckDim }
    /// The coarsest kept level's side (64 for a 1024 input).
    package var embeddingGridSize: Int { stageGridSizes[max(0, min(keptLevels, stageGridSizes.count) - 1)] }
    package var preprocessing: ImagePreprocessing {
        get { imagePreprocessing ?? .sam2 }
        set { imagePreprocessing = newValue == .sam2 ? nil : newValue }
    }

    /// SAM2ImagePredictor's `_features` names: "image_embed" and "high_res_feats" 0 and 1.
    package var featureNames: [String] {
        ["image_embed"] + (highResolutionFeatures ? ["high_res_feats_0", "high_res_feats_1"] : [])
    }

    package var featureShapes: [[Int]] {
        let g = embeddingGridSize, grids = stageGridSizes
        guard highResolutionFeatures, grids.count >= 2 else { return [[1, neckDim, g, g]] }
        return [[1, neckDim, g, g], [1, neckDim / 8, grids[0], grids[0]], [1, neckDim / 4, grids[1], grids[1]]]
    }

    package var summary: String {
        "Hiera \(imageSize)x\(imageSize), dim \(embedDim), heads \(numHeads), stages \(stages), windows \(windowSpec), "
            + "global blocks \(globalAttentionBlocks), FPN \(neckDim)"
    }
}
