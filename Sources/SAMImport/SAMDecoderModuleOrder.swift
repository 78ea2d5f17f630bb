/// One module the runtime expects, in the order a forward pass runs it.
struct ExpectedModule: CustomStringConvertible {
    let path: String
    let kind: StructuralKind
    let role: StructuralRole

    init(_ path: String, _ kind: StructuralKind, _ role: StructuralRole = .none) {
        (self.path, self.kind, self.role) = (path, kind, role)
    }

    var description: String { "\(path) (\(kind.rawValue)\(role))" }
}

/// The modules of SAM's prompt encoder and mask decoder with weights, in forward order: what a
/// graph stripped of names is matched against. The counts (transformer depth, point embeddings,
/// mask tokens) come from what the graph holds; every other choice is upstream's.
enum SAMDecoderModuleOrder {
    /// ref: segment_anything/modeling/prompt_encoder.py PromptEncoder._embed_points, _embed_masks;
    /// segment_anything/utils/onnx.py SamOnnxModel._embed_points.
    static func promptEncoder(pointEmbeddings: Int, masks: Bool) -> [ExpectedModule] {
        var order = [ExpectedModule("prompt_encoder.pe_layer", .gaussianMatrix),
                     ExpectedModule("prompt_encoder.not_a_point_embed", .pointEmbedding, .label(-1))]
        order += (0..<pointEmbeddings).map { ExpectedModule("prompt_encoder.point_embeddings.\($0)", .pointEmbedding, .label($0)) }
        if masks {
            // ref: prompt_encoder.py mask_downscaling: Conv, LayerNorm2d, GELU, Conv, LayerNorm2d, GELU, Conv.
            order += [ExpectedModule("prompt_encoder.mask_downscaling.0", .conv),
                      ExpectedModule("prompt_encoder.mask_downscaling.1", .channelAffine),
                      ExpectedModule("prompt_encoder.mask_downscaling.3", .conv),
                      ExpectedModule("prompt_encoder.mask_downscaling.4", .channelAffine),
                      ExpectedModule("prompt_encoder.mask_downscaling.6", .conv)]
        }
        return order
    }

    /// ref: segment_anything/modeling/transformer.py TwoWayTransformer.forward, TwoWayAttentionBlock.forward;
    /// mask_decoder.py MaskDecoder.predict_masks (upscaling, then the hypernetwork MLPs, then the IoU head).
    static func maskDecoder(depth: Int, maskTokens: Int) -> [ExpectedModule] {
        var order: [ExpectedModule] = []
        for layer in 0..<depth {
            let block = "mask_decoder.transformer.layers.\(layer)."
            order += [ExpectedModule(block + "self_attn", .selfAttention),
                      ExpectedModule(block + "norm1", .layerNorm),
                      ExpectedModule(block + "cross_attn_token_to_image", .crossAttention),
                      ExpectedModule(block + "norm2", .layerNorm),
                      ExpectedModule(block + "mlp.lin1", .linear),
                      ExpectedModule(block + "mlp.lin2", .linear),
                      ExpectedModule(block + "norm3", .layerNorm),
                      ExpectedModule(block + "cross_attn_image_to_token", .crossAttention),
                      ExpectedModule(block + "norm4", .layerNorm)]
        }
        order += [ExpectedModule("mask_decoder.transformer.final_attn_token_to_image", .crossAttention),
                  ExpectedModule("mask_decoder.transformer.norm_final_attn", .layerNorm),
                  ExpectedModule("mask_decoder.output_upscaling.0", .convTranspose),
                  ExpectedModule("mask_decoder.output_upscaling.1", .channelAffine),
                  ExpectedModule("mask_decoder.output_upscaling.3", .convTranspose)]
        // hs[:, 0, :] is the IoU token; hs[:, 1 + i, :] mask token i.
        for token in 0..<maskTokens {
            let mlp = "mask_decoder.output_hypernetworks_mlps.\(token).layers."
            order += [ExpectedModule(mlp + "0", .linear, .token(1 + token)), ExpectedModule(mlp + "1", .linear),
                      ExpectedModule(mlp + "2", .linear)]
        }
        order += [ExpectedModule("mask_decoder.iou_prediction_head.layers.0", .linear, .token(0)),
                  ExpectedModule("mask_decoder.iou_prediction_head.layers.1", .linear),
                  ExpectedModule("mask_decoder.iou_prediction_head.layers.2", .linear)]
        return order
    }
}
