/// What SAM 2 adds to `SAMConfig.inferred`: recognising SAM 2 weights (so a decoder-only SAM 2
/// export is not read as SAM's) and the decoder's additions from their keys.
extension SAMConfig {
    /// Keys only SAM 2 weights have: the Hiera trunk, image mode's additions, the decoder's
    /// object-score token and SAM 2's transformer MLP naming.
    static func looksLikeSAM2(_ shapes: [String: [Int]]) -> Bool {
        shapes["mask_decoder.obj_score_token.weight"] != nil || shapes["mask_decoder.conv_s0.weight"] != nil
            || shapes["mask_decoder.transformer.layers.0.mlp.layers.0.weight"] != nil
            || shapes[SAM2ImageEncoder.noMemoryEmbeddingKey] != nil
            || shapes.keys.contains { $0.hasPrefix("image_encoder.trunk.") }
    }


    /// SAM 2's decoder sizes and options from the shapes: the transformer MLP's width under its
    /// SAM 2 name and which object-score head the weights have. The sigmoid IoU head and the
    /// stability fallback are in no shape: `base`'s (or the published models') are kept.
    /// ref: sam2/modeling/sam/mask_decoder.py MaskDecoder.__init__
    mutating func inferSAM2Decoder(fromShapes shapes: [String: [Int]]) {
        guard imageEncoder.family == HieraFamily.name else { return }
        let decoder = "mask_decoder"
        if let hidden = shapes["\(decoder).transformer.layers.0.mlp.layers.0.weight"] { maskDecoder.mlpDim = hidden[0] }
        var options = maskDecoder.familyOptions[SAM2DecoderOptions.self] ?? SAM2DecoderOptions()
        if shapes["\(decoder).pred_obj_score_head.layers.0.weight"] != nil {
            options.objectScoreHead = .mlp
        } else if shapes["\(decoder).pred_obj_score_head.weight"] != nil {
            options.objectScoreHead = .linear
        } else if shapes["\(decoder).obj_score_token.weight"] != nil {
            // The token without its head: an export that does not return object scores dropped the
            // head; the model had one (every published model's is the MLP).
            if options.objectScoreHead == .none { options.objectScoreHead = .mlp }
        } else if shapes["\(decoder).iou_token.weight"] != nil {
            options.objectScoreHead = .none
        }
        if let hiera = imageEncoder.as(HieraConfig.self) { options.highResolutionFeatures = hiera.highResolutionFeatures }
        maskDecoder.familyOptions[SAM2DecoderOptions.self] = options
    }
}
