/// Hugging Face `transformers` `Sam2VideoModel` checkpoints name SAM 2's video modules their own way
/// (`memory_temporal_positional_encoding`, `memory_encoder.memory_fuser.layers.0.depthwise_conv`,
/// `object_pointer_proj.proj_in`). This table maps them to the canonical names, which for video
/// weights are upstream SAM2Base's own (`maskmem_tpos_enc`, `memory_encoder.fuser.layers.0.dwconv`,
/// `obj_ptr_proj.layers.0`), one rule per module kind. Every tensor keeps its shape and layout: the
/// fuser's `scale` is upstream's `gamma`, its pointwise convs are Linear in both.
/// ref: transformers 5.23 modeling_sam2_video.py Sam2VideoModel.__init__, Sam2VideoMemoryAttention(Layer),
/// Sam2VideoRoPEAttention, Sam2VideoMemoryEncoder, Sam2VideoMaskDownSampler(Layer),
/// Sam2VideoMemoryFuserCXBlock, Sam2VideoFeedForward; convert_sam2_video_to_hf.py replace_keys (the
/// inverse of this table); sam2/modeling/sam2_base.py, memory_attention.py, memory_encoder.py.
/// Checked by converters/export_hf_sam2_video.py, which renames with transformers' own replace_keys.
enum HuggingFaceSam2VideoNames {
    typealias Rule = HuggingFaceSamNames.Rule

    static let rules: [Rule] = parameterRules + memoryAttentionRules + memoryEncoderRules

    // ref: sam2_base.py SAM2Base.__init__ (the parameters and small modules beside the two big ones)
    static let parameterRules: [Rule] = [
        Rule(hf: "memory_temporal_positional_encoding", canonical: "maskmem_tpos_enc"),
        Rule(hf: "no_memory_positional_encoding", canonical: "no_mem_pos_enc"),
        Rule(hf: "no_object_pointer", canonical: "no_obj_ptr"),
        Rule(hf: "occlusion_spatial_embedding_parameter", canonical: "no_obj_embed_spatial"),
        Rule(hf: "temporal_positional_encoding_projection_layer.*", canonical: "obj_ptr_tpos_proj.*"),
        Rule(hf: "mask_downsample.*", canonical: "mask_downsample.*"),
        // Sam2VideoFeedForward: proj_in, hidden `layers`, proj_out = upstream MLP's layers 0, 1.., last.
        Rule(hf: "object_pointer_proj.proj_in.*", canonical: "obj_ptr_proj.layers.0.*"),
        Rule(hf: "object_pointer_proj.layers.#.*", canonical: "obj_ptr_proj.layers.#+1.*"),
        Rule(hf: "object_pointer_proj.proj_out.*", canonical: "obj_ptr_proj.layers.#last.*"),
    ]

    // ref: memory_attention.py MemoryAttention, MemoryAttentionLayer; transformer.py RoPEAttention
    static let memoryAttentionRules: [Rule] = {
        var rules: [Rule] = []
        let projections = [("q_proj", "q_proj"), ("k_proj", "k_proj"), ("v_proj", "v_proj"), ("o_proj", "out_proj")]
        for attention in ["self_attn", "cross_attn_image"] {
            for (hf, upstream) in projections {
                rules.append(Rule(hf: "memory_attention.layers.#.\(attention).\(hf).*",
                                  canonical: "memory_attention.layers.#.\(attention).\(upstream).*"))
            }
        }
        for linear in ["linear1", "linear2"] {
            rules.append(Rule(hf: "memory_attention.layers.#.\(linear).*", canonical: "memory_attention.layers.#.\(linear).*"))
        }
        for norm in 1...3 {
            rules.append(Rule(hf: "memory_attention.layers.#.layer_norm\(norm).*", canonical: "memory_attention.layers.#.norm\(norm).*"))
        }
        rules.append(Rule(hf: "memory_attention.layer_norm.*", canonical: "memory_attention.norm.*"))
        return rules
    }()

    // ref: memory_encoder.py MemoryEncoder, MaskDownSampler (a Sequential of conv, LayerNorm2d, GELU
    // per step, then the final 1x1 conv), Fuser, CXBlock
    static let memoryEncoderRules: [Rule] = [
        Rule(hf: "memory_encoder.mask_downsampler.layers.#.conv.*", canonical: "memory_encoder.mask_downsampler.encoder.#x3.*"),
        Rule(hf: "memory_encoder.mask_downsampler.layers.#.layer_norm.*",
             canonical: "memory_encoder.mask_downsampler.encoder.#x3+1.*"),
        Rule(hf: "memory_encoder.mask_downsampler.final_conv.*", canonical: "memory_encoder.mask_downsampler.encoder.#x3last.*"),
        Rule(hf: "memory_encoder.feature_projection.*", canonical: "memory_encoder.pix_feat_proj.*"),
        Rule(hf: "memory_encoder.memory_fuser.layers.#.depthwise_conv.*", canonical: "memory_encoder.fuser.layers.#.dwconv.*"),
        Rule(hf: "memory_encoder.memory_fuser.layers.#.layer_norm.*", canonical: "memory_encoder.fuser.layers.#.norm.*"),
        Rule(hf: "memory_encoder.memory_fuser.layers.#.pointwise_conv1.*", canonical: "memory_encoder.fuser.layers.#.pwconv1.*"),
        Rule(hf: "memory_encoder.memory_fuser.layers.#.pointwise_conv2.*", canonical: "memory_encoder.fuser.layers.#.pwconv2.*"),
        Rule(hf: "memory_encoder.memory_fuser.layers.#.scale", canonical: "memory_encoder.fuser.layers.#.gamma"),
        Rule(hf: "memory_encoder.projection.*", canonical: "memory_encoder.out_proj.*"),
    ]
}
