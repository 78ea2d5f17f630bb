/// A transformers `Sam2Config` / `Sam2VideoConfig` as this toolkit's `SAMConfig`: every field it
/// states, transformers' default for every field it leaves out, and what transformers builds without
/// a field for it (the high-resolution maps and `no_memory_embedding` in image mode, the sigmoid IoU
/// head, the MLP object-score head and object-pointer projection). What the runtime cannot build is
/// refused naming the field. Settings of SAM2VideoPredictor that are no model's (hole filling,
/// corrections as conditioning frames) keep `build_sam2_video_predictor`'s values, as for a `.pt`.
/// ref: transformers 5.23 modeling_sam2.py Sam2HieraDetModel, Sam2VisionNeck, Sam2VisionModel,
/// Sam2MaskDecoder; modeling_sam2_video.py Sam2VideoModel
extension TransformersSam2Config {
    package func samConfig(file: String) throws(ConfigError) -> SAMConfig {
        var refused: [String] = []
        func require(_ holds: Bool, _ why: @autoclosure () -> String) { if !holds { refused.append(why()) } }

        let backbone = visionConfig?.backboneConfig
        let embedDim = backbone?.hiddenSize ?? 96, heads = backbone?.numAttentionHeads ?? 1
        let stages = backbone?.blocksPerStage ?? [1, 2, 7, 2]
        let stageDims = stages.indices.map { embedDim << $0 }, stageHeads = stages.indices.map { heads << $0 }
        let imageSide = square(backbone?.imageSize, default: 1024, "vision_config.backbone_config.image_size", &refused)
        let queryStride = square(backbone?.queryStride, default: 2, "vision_config.backbone_config.query_stride", &refused)
        // ref: hieradet.py Hiera (dim_mul, head_mul 2.0; PatchEmbed 7/4/3; LayerNorm eps 1e-6; GELU)
        require((backbone?.embedDimPerStage ?? stageDims) == stageDims,
                "vision_config.backbone_config.embed_dim_per_stage \(backbone?.embedDimPerStage ?? []): Hiera doubles the width "
                    + "each stage (\(stageDims))")
        require((backbone?.numAttentionHeadsPerStage ?? stageHeads) == stageHeads,
                "vision_config.backbone_config.num_attention_heads_per_stage \(backbone?.numAttentionHeadsPerStage ?? []): Hiera "
                    + "doubles the heads each stage (\(stageHeads))")
        for (name, value, expected) in [("patch_kernel_size", backbone?.patchKernelSize, HieraConfig.patchKernel),
                                        ("patch_stride", backbone?.patchStride, HieraConfig.patchStride),
                                        ("patch_padding", backbone?.patchPadding, HieraConfig.patchPadding)] {
            require(value.map { $0.values == [expected, expected] } ?? true,
                    "vision_config.backbone_config.\(name) \(value?.values ?? []): the runtime's patch embedding is \(expected)")
        }
        require((backbone?.hiddenAct ?? "gelu") == "gelu", "vision_config.backbone_config.hidden_act \(backbone?.hiddenAct ?? ""): Hiera's MLP is GELU")
        require(abs((backbone?.layerNormEps ?? 1e-6) - Double(HieraConfig.layerNormEps)) < 1e-12,
                "vision_config.backbone_config.layer_norm_eps \(backbone?.layerNormEps ?? 0): Hiera's norms use 1e-6")

        let vision = visionConfig
        let neckDim = vision?.fpnHiddenSize ?? 256
        let levels = vision?.numFeatureLevels ?? 3
        require((vision?.backboneChannelList ?? stageDims.reversed()) == stageDims.reversed(),
                "vision_config.backbone_channel_list \(vision?.backboneChannelList ?? []): the trunk's stages give \(Array(stageDims.reversed()))")
        require((vision?.fpnKernelSize ?? 1) == 1 && (vision?.fpnStride ?? 1) == 1 && (vision?.fpnPadding ?? 0) == 0,
                "vision_config.fpn_kernel_size/fpn_stride/fpn_padding: the neck's laterals are 1x1 convs")
        require((1...stages.count).contains(levels), "vision_config.num_feature_levels \(levels): the trunk has \(stages.count) stages")

        let hiera = HieraConfig(
            imageSize: imageSide, inChannels: backbone?.numChannels ?? 3, embedDim: embedDim, numHeads: heads, stages: stages,
            globalAttentionBlocks: backbone?.globalAttentionBlocks ?? [5, 7, 9],
            windowSpec: backbone?.windowSizePerStage ?? [8, 4, 14, 7],
            positionEmbeddingSize: backbone?.windowPositionalEmbeddingBackgroundSize?.values ?? [7, 7],
            queryPoolStages: backbone?.numQueryPoolStages ?? 3, queryStride: queryStride, mlpRatio: backbone?.mlpRatio ?? 4,
            neckDim: neckDim, fpnTopDownLevels: vision?.fpnTopDownLevels ?? [2, 3], scalp: stages.count - levels,
            highResolutionFeatures: true, addNoMemoryEmbedding: true)
        var config = SAMConfig.sam2(hiera)

        let prompt = promptEncoderConfig
        let promptSide = square(prompt?.imageSize, default: 1024, "prompt_encoder_config.image_size", &refused)
        let patch = square(prompt?.patchSize, default: 16, "prompt_encoder_config.patch_size", &refused)
        require(patch > 0 && promptSide % patch == 0, "prompt_encoder_config.patch_size \(patch) does not divide image_size \(promptSide)")
        require((prompt?.numPointEmbeddings ?? 4) == 4, "prompt_encoder_config.num_point_embeddings \(prompt?.numPointEmbeddings ?? 0): SAM's prompt encoder has 4")
        config.promptEncoder = PromptEncoderConfig(embedDim: prompt?.hiddenSize ?? 256, imageEmbeddingSize: patch > 0 ? promptSide / patch : 0,
                                                   inputImageSize: promptSide, maskInChannels: prompt?.maskInputChannels ?? 16)

        let decoder = maskDecoderConfig
        config.maskDecoder = MaskDecoderConfig(
            transformerDim: decoder?.hiddenSize ?? 256, depth: decoder?.numHiddenLayers ?? 2, numHeads: decoder?.numAttentionHeads ?? 8,
            mlpDim: decoder?.mlpDim ?? 2048, attentionDownsampleRate: decoder?.attentionDownsampleRate ?? 2,
            numMultimaskOutputs: decoder?.numMultimaskOutputs ?? 3, iouHeadDepth: decoder?.iouHeadDepth ?? 3,
            iouHeadHiddenDim: decoder?.iouHeadHiddenDim ?? 256)
        config.maskDecoder.familyOptions[SAM2DecoderOptions.self] = SAM2DecoderOptions(
            highResolutionFeatures: true, iouSigmoid: true, objectScoreHead: .mlp,
            dynamicMultimaskViaStability: decoder?.dynamicMultimaskViaStability ?? true,
            stabilityDelta: decoder?.dynamicMultimaskStabilityDelta ?? 0.05,
            stabilityThreshold: decoder?.dynamicMultimaskStabilityThresh ?? 0.98)

        if isVideo {
            let videoSide = square(imageSize, default: 1024, "image_size", &refused)
            require(videoSide == imageSide, "image_size \(videoSide) is not vision_config.backbone_config.image_size \(imageSide)")
            config.videoMode = videoConfig(embeddingGrid: config.promptEncoder.imageEmbeddingSize, refused: &refused)
        }
        guard refused.isEmpty else {
            throw ConfigError(file: file, message: "transformers \(modelType) config the runtime cannot build:\n  "
                                + refused.joined(separator: "\n  "))
        }
        try config.validate(file: file)
        return config
    }

    /// Sam2VideoConfig's fields as `SAM2VideoConfig`: its one temporal-encoding switch is SAM 2.1's
    /// three (added, projected, signed), what transformers always does is the published default.
    /// ref: modeling_sam2_video.py Sam2VideoModel._process_object_pointers, _get_object_pointers, _encode_new_memory
    func videoConfig(embeddingGrid: Int, refused: inout [String]) -> SAM2VideoConfig {
        var video = SAM2VideoConfig()
        video.numMaskmem = numMaskmem ?? 7
        video.memoryDim = memoryEncoderOutputChannels ?? 64
        video.memorySigmoidScale = Float(sigmoidScaleForMemEnc ?? 20)
        video.memorySigmoidBias = Float(sigmoidBiasForMemEnc ?? -10)
        video.multimaskOutputInSAM = multimaskOutputInSam ?? true
        video.multimaskMinPoints = multimaskMinPtNum ?? 0
        video.multimaskMaxPoints = multimaskMaxPtNum ?? 1
        video.multimaskOutputForTracking = multimaskOutputForTracking ?? true
        video.maxObjectPointers = maxObjectPointersInEncoder ?? 16
        video.maxConditioningFrames = maxCondFrameNum ?? -1
        let temporal = enableTemporalPosEncodingForObjectPointers ?? true
        video.addTemporalEncodingToPointers = temporal
        video.projectTemporalEncodingInPointers = temporal
        video.signedTemporalEncodingInPointers = temporal
        video.noObjectEmbedSpatial = enableOcclusionSpatialEmbedding ?? true
        video.memoryAttentionLayers = memoryAttentionNumLayers ?? 4
        video.memoryAttentionHeads = memoryAttentionNumAttentionHeads ?? 1
        video.memoryAttentionFeedForward = memoryAttentionFeedForwardHiddenSize ?? 2048
        video.ropeTheta = ropeParameters?.ropeTheta ?? memoryAttentionRopeTheta ?? 10_000
        video.maskDownsamplerKernel = maskDownsamplerKernelSize ?? 3
        video.maskDownsamplerStride = maskDownsamplerStride ?? 2
        video.maskDownsamplerPadding = maskDownsamplerPadding ?? 1
        video.maskDownsamplerTotalStride = maskDownsamplerTotalStride ?? 16
        video.fuserKernel = memoryFuserKernelSize ?? 7
        video.fuserPadding = memoryFuserPadding ?? 3
        // ref: memory_attention.py (ReLU feed-forward), memory_encoder.py (GELU downsampler and CXBlock)
        for (name, value, expected) in [("memory_attention_feed_forward_hidden_act", memoryAttentionFeedForwardHiddenAct, "relu"),
                                        ("mask_downsampler_hidden_act", maskDownsamplerHiddenAct, "gelu"),
                                        ("memory_fuser_hidden_act", memoryFuserHiddenAct, "gelu")] where (value ?? expected) != expected {
            refused.append("\(name) \(value ?? ""): the runtime's is \(expected)")
        }
        if let type = ropeParameters?.ropeType, type != "axial" {
            refused.append("rope_parameters.rope_type \(type): memory attention's RoPE is axial")
        }
        // transformers precomputes the RoPE positions for this grid; the runtime rotates on the frame's own.
        let grid = memoryAttentionRopeFeatSizes ?? [64, 64]
        if grid != [embeddingGrid, embeddingGrid] {
            refused.append("memory_attention_rope_feat_sizes \(grid): the image embedding grid is \(embeddingGrid)x\(embeddingGrid)")
        }
        return video
    }

    /// The side of a square size field, transformers' default when absent; a non-square one is refused.
    private func square(_ size: SideLengths?, default side: Int, _ name: String, _ refused: inout [String]) -> Int {
        guard let size else { return side }
        guard let value = size.square else {
            refused.append("\(name) \(size.values): the runtime takes square sizes")
            return side
        }
        return value
    }
}
