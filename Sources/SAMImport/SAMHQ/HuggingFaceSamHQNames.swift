/// transformers' `SamHQModel` checkpoints: SAM's names (`HuggingFaceSamNames`) for everything SAM-HQ
/// shares with SAM, and these for the modules `MaskDecoderHQ` adds (transformers' `hq_token`,
/// `hq_mask_mlp`, `compress_vit_conv1`... for sam-hq's `hf_token`, `hf_mlp`, `compress_vit_feat.0`...).
/// ref: transformers 5.23 models/sam_hq/modeling_sam_hq.py SamHQMaskDecoder.__init__;
/// segment_anything_hq/modeling/mask_decoder_hq.py MaskDecoderHQ.__init__
enum HuggingFaceSamHQNames {
    typealias Rule = HuggingFaceSamNames.Rule

    static let rules: [Rule] = [
        Rule(hf: "mask_decoder.hq_token.weight", canonical: "mask_decoder.hf_token.weight"),
        // transformers' SamHQFeedForward: proj_in, hidden `layers`, proj_out = upstream MLP's layers 0, 1.., last.
        Rule(hf: "mask_decoder.hq_mask_mlp.proj_in.*", canonical: "mask_decoder.hf_mlp.layers.0.*"),
        Rule(hf: "mask_decoder.hq_mask_mlp.layers.#.*", canonical: "mask_decoder.hf_mlp.layers.#+1.*"),
        Rule(hf: "mask_decoder.hq_mask_mlp.proj_out.*", canonical: "mask_decoder.hf_mlp.layers.#last.*"),
        // The three fusion stacks: conv, LayerNorm2d, (GELU, index 2), conv.
        Rule(hf: "mask_decoder.compress_vit_conv1.*", canonical: "mask_decoder.compress_vit_feat.0.*"),
        Rule(hf: "mask_decoder.compress_vit_norm.*", canonical: "mask_decoder.compress_vit_feat.1.*"),
        Rule(hf: "mask_decoder.compress_vit_conv2.*", canonical: "mask_decoder.compress_vit_feat.3.*"),
        Rule(hf: "mask_decoder.encoder_conv1.*", canonical: "mask_decoder.embedding_encoder.0.*"),
        Rule(hf: "mask_decoder.encoder_norm.*", canonical: "mask_decoder.embedding_encoder.1.*"),
        Rule(hf: "mask_decoder.encoder_conv2.*", canonical: "mask_decoder.embedding_encoder.3.*"),
        Rule(hf: "mask_decoder.mask_conv1.*", canonical: "mask_decoder.embedding_maskfeature.0.*"),
        Rule(hf: "mask_decoder.mask_norm.*", canonical: "mask_decoder.embedding_maskfeature.1.*"),
        Rule(hf: "mask_decoder.mask_conv2.*", canonical: "mask_decoder.embedding_maskfeature.3.*"),
    ]
}
