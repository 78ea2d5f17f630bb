/// Reads the hyperparameters that the weights' shapes determine, keeping `base` for the rest
/// (head counts of the decoder, ratios no weight shows). Image size, merge strides and the
/// embedding grid are not in any weight: pass what an export graph states, else `base`'s are kept
/// (with upstream's stride rule when the stage widths differ from base's). Used when weights come
/// without a config; the result is checked again, strictly, when the model is built from them.
extension SAMConfig {
    public static func inferred(fromShapes shapes: [String: [Int]], imageSize: Int? = nil, mergeStrides: [Int]? = nil,
                                imageEmbeddingSize: Int? = nil, base: SAMConfig = .mobileSAM) -> SAMConfig {
        var config = base
        if let imageSize { config.imageEncoder.imageSize = imageSize }
        func shape(_ key: String) -> [Int]? { shapes[key] }
        func count(_ prefix: String) -> Int {
            Set(shapes.keys.compactMap { key -> Int? in
                guard key.hasPrefix(prefix + ".") else { return nil }
                return Int(key.dropFirst(prefix.count + 1).prefix { $0 != "." })
            }).count
        }

        // Image encoder (TinyViT). ref: tiny_vit_sam.py TinyViT.__init__
        let encoder = "image_encoder"
        let stages = count("\(encoder).layers")
        if stages > 0 {
            var tiny = config.imageEncoder
            tiny.depths = (0..<stages).map { count("\(encoder).layers.\($0).blocks") }
            if let patch = shape("\(encoder).patch_embed.seq.2.c.weight") { tiny.embedDims = [patch[0]] }
            for stage in 1..<max(stages, 1) {
                if let merge = shape("\(encoder).layers.\(stage - 1).downsample.conv3.c.weight") { tiny.embedDims.append(merge[0]) }
            }
            var heads = base.imageEncoder.numHeads, windows = base.imageEncoder.windowSizes
            heads = Array(heads.prefix(stages)) + Array(repeating: heads.last ?? 1, count: max(0, stages - heads.count))
            windows = Array(windows.prefix(stages)) + Array(repeating: windows.last ?? 7, count: max(0, stages - windows.count))
            for stage in 1..<max(stages, 1) {
                guard let biases = shape("\(encoder).layers.\(stage).blocks.0.attn.attention_biases"), biases.count == 2 else { continue }
                heads[stage] = biases[0]
                let side = Int(Double(biases[1]).squareRoot().rounded())
                if side * side == biases[1] { windows[stage] = side }
            }
            tiny.numHeads = heads
            tiny.windowSizes = windows
            if stages > 1, let fc1 = shape("\(encoder).layers.1.blocks.0.mlp.fc1.weight"), fc1[1] > 0 {
                tiny.mlpRatio = Double(fc1[0]) / Double(fc1[1])
            }
            if let conv1 = shape("\(encoder).layers.0.blocks.0.conv1.c.weight"), conv1[1] > 0 {
                tiny.mbconvExpandRatio = Double(conv1[0]) / Double(conv1[1])
            }
            if stages > 1, let local = shape("\(encoder).layers.1.blocks.0.local_conv.c.weight"), local.count == 4 {
                tiny.localConvSize = local[2]
            }
            if let neck = shape("\(encoder).neck.0.weight") { tiny.neckDim = neck[0] }
            if let mergeStrides {
                tiny.mergeStrides = mergeStrides
            } else if tiny.embedDims.count == stages, tiny.embedDims != base.imageEncoder.embedDims {
                tiny.mergeStrides = TinyViTConfig.upstreamMergeStrides(embedDims: tiny.embedDims)
            }
            config.imageEncoder = tiny
        }

        // Prompt encoder. ref: prompt_encoder.py PromptEncoder.__init__
        if let notAPoint = shape("prompt_encoder.not_a_point_embed.weight") { config.promptEncoder.embedDim = notAPoint[1] }
        if let maskIn = shape("prompt_encoder.mask_downscaling.3.weight") { config.promptEncoder.maskInChannels = maskIn[0] }
        // ref: build_sam.py — image_embedding_size = image_size // vit_patch_size (TinyViT: patch embed /4, merges)
        if imageSize == nil, stages == 0, let imageEmbeddingSize {
            // A decoder-only input states the grid, not the image: SAM's encoders all downsample 16x.
            config.imageEncoder.imageSize = imageEmbeddingSize * 16
        }
        config.promptEncoder.inputImageSize = config.imageEncoder.imageSize
        if let imageEmbeddingSize {
            config.promptEncoder.imageEmbeddingSize = imageEmbeddingSize
        } else if stages > 0 {
            let downsampling = 4 * config.imageEncoder.mergeStrides.reduce(1, *)
            config.promptEncoder.imageEmbeddingSize = config.imageEncoder.imageSize / max(downsampling, 1)
        }

        // Mask decoder. ref: mask_decoder.py MaskDecoder.__init__, transformer.py TwoWayTransformer.__init__
        let decoder = "mask_decoder"
        if let iouToken = shape("\(decoder).iou_token.weight") { config.maskDecoder.transformerDim = iouToken[1] }
        let depth = count("\(decoder).transformer.layers")
        if depth > 0 { config.maskDecoder.depth = depth }
        if let lin1 = shape("\(decoder).transformer.layers.0.mlp.lin1.weight") { config.maskDecoder.mlpDim = lin1[0] }
        if let q = shape("\(decoder).transformer.layers.0.cross_attn_token_to_image.q_proj.weight"), q[0] > 0 {
            config.maskDecoder.attentionDownsampleRate = q[1] / q[0]
        }
        if let maskTokens = shape("\(decoder).mask_tokens.weight") { config.maskDecoder.numMultimaskOutputs = maskTokens[0] - 1 }
        let iouDepth = count("\(decoder).iou_prediction_head.layers")
        if iouDepth > 0 { config.maskDecoder.iouHeadDepth = iouDepth }
        if let hidden = shape("\(decoder).iou_prediction_head.layers.0.weight") { config.maskDecoder.iouHeadHiddenDim = hidden[0] }
        return config
    }
}
