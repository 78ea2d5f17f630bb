/// Hugging Face `transformers` `Sam2Model` and `Sam2VideoModel` checkpoints (`model.safetensors`)
/// name SAM 2's modules their own way (`vision_encoder.backbone.blocks.0.layer_norm1`,
/// `mask_decoder.transformer.layers.0.self_attn.o_proj`, `no_memory_embedding`). This table maps
/// them to the canonical names (upstream `sam2`'s, with `sam_prompt_encoder` / `sam_mask_decoder`
/// written `prompt_encoder` / `mask_decoder`, as `SAM2Names` does), one rule per module kind.
/// Patterns are `HuggingFaceSamNames.Rule`'s, plus `#row`: the stored tensor is one table whose rows
/// are upstream's separate tensors (`prompt_encoder.point_embed.weight` [4, C] holds
/// `point_embeddings.0..3.weight`, each [1, C]). Sam2VideoModel's video modules have their own table,
/// `HuggingFaceSam2VideoNames`, whose rules follow these.
/// ref: transformers 5.23 modeling_sam2.py Sam2Model, Sam2HieraDetModel, Sam2VisionNeck,
/// Sam2PromptEncoder, Sam2MaskDecoder; sam2/modeling/backbones/hieradet.py, sam/mask_decoder.py.
/// Checked by converters/export_hf_sam2.py, whose renamed checkpoint runs in transformers to the
/// upstream predictor's outputs.
enum HuggingFaceSam2Names {
    typealias Rule = HuggingFaceSamNames.Rule

    /// The token of a canonical pattern that takes one row of the stored tensor each.
    static let rowToken = "#row"

    /// Sam2Model's image modules, then Sam2VideoModel's video modules (`HuggingFaceSam2VideoNames`).
    static let rules: [Rule] = imageRules + HuggingFaceSam2VideoNames.rules
    static let imageRules: [Rule] = hieraRules + promptEncoderRules + maskDecoderRules

    // ref: sam2/modeling/backbones/hieradet.py Hiera, MultiScaleBlock; image_encoder.py FpnNeck
    static let hieraRules: [Rule] = [
        Rule(hf: "vision_encoder.backbone.pos_embed", canonical: "image_encoder.trunk.pos_embed"),
        Rule(hf: "vision_encoder.backbone.pos_embed_window", canonical: "image_encoder.trunk.pos_embed_window"),
        Rule(hf: "vision_encoder.backbone.patch_embed.projection.*", canonical: "image_encoder.trunk.patch_embed.proj.*"),
        Rule(hf: "vision_encoder.backbone.blocks.#.layer_norm1.*", canonical: "image_encoder.trunk.blocks.#.norm1.*"),
        Rule(hf: "vision_encoder.backbone.blocks.#.layer_norm2.*", canonical: "image_encoder.trunk.blocks.#.norm2.*"),
        Rule(hf: "vision_encoder.backbone.blocks.#.attn.qkv.*", canonical: "image_encoder.trunk.blocks.#.attn.qkv.*"),
        Rule(hf: "vision_encoder.backbone.blocks.#.attn.proj.*", canonical: "image_encoder.trunk.blocks.#.attn.proj.*"),
        Rule(hf: "vision_encoder.backbone.blocks.#.mlp.proj_in.*", canonical: "image_encoder.trunk.blocks.#.mlp.layers.0.*"),
        Rule(hf: "vision_encoder.backbone.blocks.#.mlp.proj_out.*", canonical: "image_encoder.trunk.blocks.#.mlp.layers.1.*"),
        Rule(hf: "vision_encoder.backbone.blocks.#.proj.*", canonical: "image_encoder.trunk.blocks.#.proj.*"),
        Rule(hf: "vision_encoder.neck.convs.#.*", canonical: "image_encoder.neck.convs.#.conv.*"),
        Rule(hf: "no_memory_embedding", canonical: "no_mem_embed"),
    ]

    // ref: sam2/modeling/sam/prompt_encoder.py PromptEncoder.__init__ (SAM's, as in HuggingFaceSamNames)
    static let promptEncoderRules: [Rule] = [
        // Two copies of the random-Fourier matrix (not tied in Sam2Model); upstream has one, so
        // `ImportedWeights.insert` refuses them unless they are bit-equal.
        Rule(hf: "shared_image_embedding.positional_embedding",
             canonical: "prompt_encoder.pe_layer.positional_encoding_gaussian_matrix"),
        Rule(hf: "prompt_encoder.shared_embedding.positional_embedding",
             canonical: "prompt_encoder.pe_layer.positional_encoding_gaussian_matrix"),
        Rule(hf: "prompt_encoder.point_embed.weight", canonical: "prompt_encoder.point_embeddings.\(rowToken).weight"),
        Rule(hf: "prompt_encoder.not_a_point_embed.weight", canonical: "prompt_encoder.not_a_point_embed.weight"),
        Rule(hf: "prompt_encoder.no_mask_embed.weight", canonical: "prompt_encoder.no_mask_embed.weight"),
        Rule(hf: "prompt_encoder.mask_embed.conv1.*", canonical: "prompt_encoder.mask_downscaling.0.*"),
        Rule(hf: "prompt_encoder.mask_embed.layer_norm1.*", canonical: "prompt_encoder.mask_downscaling.1.*"),
        Rule(hf: "prompt_encoder.mask_embed.conv2.*", canonical: "prompt_encoder.mask_downscaling.3.*"),
        Rule(hf: "prompt_encoder.mask_embed.layer_norm2.*", canonical: "prompt_encoder.mask_downscaling.4.*"),
        Rule(hf: "prompt_encoder.mask_embed.conv3.*", canonical: "prompt_encoder.mask_downscaling.6.*"),
    ]

    // ref: sam2/modeling/sam/mask_decoder.py MaskDecoder; transformer.py TwoWayTransformer, Attention;
    // sam2_utils.py MLP (two-layer in the transformer blocks, three-layer heads)
    static let maskDecoderRules: [Rule] = {
        var rules = ["iou_token", "mask_tokens", "obj_score_token"].map {
            Rule(hf: "mask_decoder.\($0).weight", canonical: "mask_decoder.\($0).weight")
        }
        let projections = [("q_proj", "q_proj"), ("k_proj", "k_proj"), ("v_proj", "v_proj"), ("o_proj", "out_proj")]
        for attention in ["self_attn", "cross_attn_token_to_image", "cross_attn_image_to_token"] {
            for (hf, upstream) in projections {
                rules.append(Rule(hf: "mask_decoder.transformer.layers.#.\(attention).\(hf).*",
                                  canonical: "mask_decoder.transformer.layers.#.\(attention).\(upstream).*"))
            }
        }
        for (hf, upstream) in projections {
            rules.append(Rule(hf: "mask_decoder.transformer.final_attn_token_to_image.\(hf).*",
                              canonical: "mask_decoder.transformer.final_attn_token_to_image.\(upstream).*"))
        }
        for norm in 1...4 {
            rules.append(Rule(hf: "mask_decoder.transformer.layers.#.layer_norm\(norm).*",
                              canonical: "mask_decoder.transformer.layers.#.norm\(norm).*"))
        }
        rules += [
            Rule(hf: "mask_decoder.transformer.layers.#.mlp.proj_in.*", canonical: "mask_decoder.transformer.layers.#.mlp.layers.0.*"),
            Rule(hf: "mask_decoder.transformer.layers.#.mlp.proj_out.*", canonical: "mask_decoder.transformer.layers.#.mlp.layers.1.*"),
            Rule(hf: "mask_decoder.transformer.layer_norm_final_attn.*", canonical: "mask_decoder.transformer.norm_final_attn.*"),
            Rule(hf: "mask_decoder.upscale_conv1.*", canonical: "mask_decoder.output_upscaling.0.*"),
            Rule(hf: "mask_decoder.upscale_layer_norm.*", canonical: "mask_decoder.output_upscaling.1.*"),
            Rule(hf: "mask_decoder.upscale_conv2.*", canonical: "mask_decoder.output_upscaling.3.*"),
            Rule(hf: "mask_decoder.conv_s0.*", canonical: "mask_decoder.conv_s0.*"),
            Rule(hf: "mask_decoder.conv_s1.*", canonical: "mask_decoder.conv_s1.*"),
        ]
        // Sam2FeedForward heads: proj_in, hidden `layers`, proj_out = upstream MLP's layers 0, 1.., last.
        for head in ["output_hypernetworks_mlps.#", "iou_prediction_head", "pred_obj_score_head"] {
            rules += [
                Rule(hf: "mask_decoder.\(head).proj_in.*", canonical: "mask_decoder.\(head).layers.0.*"),
                Rule(hf: "mask_decoder.\(head).layers.#.*", canonical: "mask_decoder.\(head).layers.#+1.*"),
                Rule(hf: "mask_decoder.\(head).proj_out.*", canonical: "mask_decoder.\(head).layers.#last.*"),
            ]
        }
        return rules
    }()

    /// Key prefixes only transformers' SAM 2 layout has.
    static let layoutMarkers = ["vision_encoder.backbone.", "no_memory_embedding"]
}
