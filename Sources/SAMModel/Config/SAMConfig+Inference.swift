/// Reads the hyperparameters that the weights' shapes determine, keeping `base` for the rest
/// (head counts of the decoder, ratios no weight shows). Image size, merge strides and the
/// embedding grid are not in any weight: pass what an export graph states, else `base`'s are kept
/// (with upstream's stride rule when the stage widths differ from base's). The model family is the
/// one the weights fit best (`ModelFamilies.bestFit`); a tie is an error naming the candidates.
/// Used when weights come without a config; the result is checked again, strictly, when the model
/// is built from them.
extension SAMConfig {
    package static func inferred(fromShapes shapes: [String: [Int]], imageSize: Int? = nil, mergeStrides: [Int]? = nil,
                                imageEmbeddingSize: Int? = nil, base: SAMConfig = .mobileSAM) throws(FamilyChoiceError) -> SAMConfig {
        let base = ModelFamilies.inferenceBase(base, shapes: shapes)
        var config = base
        func shape(_ key: String, rank: Int) -> [Int]? { ShapeQueries.shape(key, rank: rank, in: shapes) }
        func count(_ prefix: String) -> Int { ShapeQueries.childCount(prefix, in: shapes) }

        // Image encoder, of whichever family the weights hold.
        let facts = EncoderFacts(imageSize: imageSize, mergeStrides: mergeStrides)
        let encoder = try ImageEncoderFamilies.inferConfiguration(fromShapes: shapes, facts: facts, base: base.imageEncoder)
        if let encoder {
            config.imageEncoder = encoder
        } else if let imageSize {
            config.imageEncoder.imageSize = imageSize
        }

        // Prompt encoder. ref: prompt_encoder.py PromptEncoder.__init__
        if let notAPoint = shape("prompt_encoder.not_a_point_embed.weight", rank: 2) { config.promptEncoder.embedDim = notAPoint[1] }
        if let maskIn = shape("prompt_encoder.mask_downscaling.3.weight", rank: 4) { config.promptEncoder.maskInChannels = maskIn[0] }
        // ref: build_sam.py — image_embedding_size = image_size // vit_patch_size
        if imageSize == nil, encoder == nil, let imageEmbeddingSize {
            // A decoder-only input states the grid, not the image: SAM's encoders all downsample 16x.
            // A graph's dims are input: an overflowing product is left for `validate` to refuse, never trapped on.
            let (side, overflow) = imageEmbeddingSize.multipliedReportingOverflow(by: 16)
            config.imageEncoder.imageSize = overflow ? Int.max : side
        }
        config.promptEncoder.inputImageSize = config.imageEncoder.promptFrameSize
        if let imageEmbeddingSize {
            config.promptEncoder.imageEmbeddingSize = imageEmbeddingSize
        } else if encoder != nil {
            config.promptEncoder.imageEmbeddingSize = config.imageEncoder.embeddingGridSize
        }

        // Mask decoder. ref: mask_decoder.py MaskDecoder.__init__, transformer.py TwoWayTransformer.__init__
        let decoder = "mask_decoder"
        if let iouToken = shape("\(decoder).iou_token.weight", rank: 2) { config.maskDecoder.transformerDim = iouToken[1] }
        let depth = count("\(decoder).transformer.layers")
        if depth > 0 { config.maskDecoder.depth = depth }
        if let lin1 = shape("\(decoder).transformer.layers.0.mlp.lin1.weight", rank: 2) { config.maskDecoder.mlpDim = lin1[0] }
        if let q = shape("\(decoder).transformer.layers.0.cross_attn_token_to_image.q_proj.weight", rank: 2), q[0] > 0 {
            config.maskDecoder.attentionDownsampleRate = q[1] / q[0]
        }
        if let maskTokens = shape("\(decoder).mask_tokens.weight", rank: 2) { config.maskDecoder.numMultimaskOutputs = maskTokens[0] - 1 }
        let iouDepth = count("\(decoder).iou_prediction_head.layers")
        if iouDepth > 0 { config.maskDecoder.iouHeadDepth = iouDepth }
        if let hidden = shape("\(decoder).iou_prediction_head.layers.0.weight", rank: 2) { config.maskDecoder.iouHeadHiddenDim = hidden[0] }
        let family = try ModelFamilies.bestFit(keys: Set(shapes.keys), encoderFamily: config.imageEncoder.family).get()
        config.modelFamily = family.name
        family.refine(&config, fromShapes: shapes)
        return config
    }
}
