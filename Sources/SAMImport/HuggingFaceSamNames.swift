/// Hugging Face `transformers` `SamModel` checkpoints (`model.safetensors`) name SAM's modules their
/// own way (`vision_encoder.layers.0.layer_norm1`, `mask_decoder.upscale_conv1`,
/// `output_hypernetworks_mlps.0.proj_in`). This table maps them to the canonical (upstream
/// `segment_anything`) names, one rule per module kind, so a state dict in that layout imports
/// exactly as the upstream-named one does.
/// ref: transformers/models/sam/convert_sam_to_hf.py KEYS_TO_MODIFY_MAPPING and replace_keys (the
/// inverse of this table); module names checked against transformers 5.23 modeling_sam.py SamModel.
enum HuggingFaceSamNames {
    /// `hf` and `canonical` are dotted patterns. In `hf`, `#` matches a decimal index and `*` the
    /// parameter leaf (`weight` or `bias`). In `canonical`, `#` copies the next matched index,
    /// `#+1` copies it plus one, `*` copies the leaf, and `#last` is the index after the last
    /// hidden layer of the same MLP (`proj_out` of an MLP with k hidden `layers.K` is `layers.(k+1)`).
    /// `#x3` and `#x3+1` copy the index times 3 (plus 1), and `#x3last` is 3 times the count of the
    /// module's `layers.K`: upstream's Sequential of (conv, norm, activation) steps and its final conv
    /// (SAM 2's mask downsampler, whose transformers modules are `layers.K.conv`, `.layer_norm`, `final_conv`).
    struct Rule {
        let hf: String
        let canonical: String
    }

    static let rules: [Rule] = [
        // Vision encoder. ref: segment_anything/modeling/image_encoder.py ImageEncoderViT, Block, Attention
        Rule(hf: "vision_encoder.pos_embed", canonical: "image_encoder.pos_embed"),
        Rule(hf: "vision_encoder.patch_embed.projection.*", canonical: "image_encoder.patch_embed.proj.*"),
        Rule(hf: "vision_encoder.layers.#.layer_norm1.*", canonical: "image_encoder.blocks.#.norm1.*"),
        Rule(hf: "vision_encoder.layers.#.attn.qkv.*", canonical: "image_encoder.blocks.#.attn.qkv.*"),
        Rule(hf: "vision_encoder.layers.#.attn.proj.*", canonical: "image_encoder.blocks.#.attn.proj.*"),
        Rule(hf: "vision_encoder.layers.#.attn.rel_pos_h", canonical: "image_encoder.blocks.#.attn.rel_pos_h"),
        Rule(hf: "vision_encoder.layers.#.attn.rel_pos_w", canonical: "image_encoder.blocks.#.attn.rel_pos_w"),
        Rule(hf: "vision_encoder.layers.#.layer_norm2.*", canonical: "image_encoder.blocks.#.norm2.*"),
        Rule(hf: "vision_encoder.layers.#.mlp.lin1.*", canonical: "image_encoder.blocks.#.mlp.lin1.*"),
        Rule(hf: "vision_encoder.layers.#.mlp.lin2.*", canonical: "image_encoder.blocks.#.mlp.lin2.*"),
        Rule(hf: "vision_encoder.neck.conv1.*", canonical: "image_encoder.neck.0.*"),
        Rule(hf: "vision_encoder.neck.layer_norm1.*", canonical: "image_encoder.neck.1.*"),
        Rule(hf: "vision_encoder.neck.conv2.*", canonical: "image_encoder.neck.2.*"),
        Rule(hf: "vision_encoder.neck.layer_norm2.*", canonical: "image_encoder.neck.3.*"),

        // Prompt encoder. The random-Fourier matrix is held twice (tied): both names map to one
        // canonical tensor, and `ImportedWeights.insert` refuses them unless they are bit-equal.
        // ref: segment_anything/modeling/prompt_encoder.py PromptEncoder.__init__
        Rule(hf: "shared_image_embedding.positional_embedding",
             canonical: "prompt_encoder.pe_layer.positional_encoding_gaussian_matrix"),
        Rule(hf: "prompt_encoder.shared_embedding.positional_embedding",
             canonical: "prompt_encoder.pe_layer.positional_encoding_gaussian_matrix"),
        Rule(hf: "prompt_encoder.point_embed.#.weight", canonical: "prompt_encoder.point_embeddings.#.weight"),
        Rule(hf: "prompt_encoder.not_a_point_embed.weight", canonical: "prompt_encoder.not_a_point_embed.weight"),
        Rule(hf: "prompt_encoder.no_mask_embed.weight", canonical: "prompt_encoder.no_mask_embed.weight"),
        Rule(hf: "prompt_encoder.mask_embed.conv1.*", canonical: "prompt_encoder.mask_downscaling.0.*"),
        Rule(hf: "prompt_encoder.mask_embed.layer_norm1.*", canonical: "prompt_encoder.mask_downscaling.1.*"),
        Rule(hf: "prompt_encoder.mask_embed.conv2.*", canonical: "prompt_encoder.mask_downscaling.3.*"),
        Rule(hf: "prompt_encoder.mask_embed.layer_norm2.*", canonical: "prompt_encoder.mask_downscaling.4.*"),
        Rule(hf: "prompt_encoder.mask_embed.conv3.*", canonical: "prompt_encoder.mask_downscaling.6.*"),

        // Mask decoder. ref: segment_anything/modeling/mask_decoder.py MaskDecoder, MLP; transformer.py
        Rule(hf: "mask_decoder.iou_token.weight", canonical: "mask_decoder.iou_token.weight"),
        Rule(hf: "mask_decoder.mask_tokens.weight", canonical: "mask_decoder.mask_tokens.weight"),
        Rule(hf: "mask_decoder.transformer.layers.#.self_attn.q_proj.*", canonical: "mask_decoder.transformer.layers.#.self_attn.q_proj.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.self_attn.k_proj.*", canonical: "mask_decoder.transformer.layers.#.self_attn.k_proj.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.self_attn.v_proj.*", canonical: "mask_decoder.transformer.layers.#.self_attn.v_proj.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.self_attn.out_proj.*", canonical: "mask_decoder.transformer.layers.#.self_attn.out_proj.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.layer_norm1.*", canonical: "mask_decoder.transformer.layers.#.norm1.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.cross_attn_token_to_image.q_proj.*",
             canonical: "mask_decoder.transformer.layers.#.cross_attn_token_to_image.q_proj.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.cross_attn_token_to_image.k_proj.*",
             canonical: "mask_decoder.transformer.layers.#.cross_attn_token_to_image.k_proj.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.cross_attn_token_to_image.v_proj.*",
             canonical: "mask_decoder.transformer.layers.#.cross_attn_token_to_image.v_proj.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.cross_attn_token_to_image.out_proj.*",
             canonical: "mask_decoder.transformer.layers.#.cross_attn_token_to_image.out_proj.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.layer_norm2.*", canonical: "mask_decoder.transformer.layers.#.norm2.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.mlp.lin1.*", canonical: "mask_decoder.transformer.layers.#.mlp.lin1.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.mlp.lin2.*", canonical: "mask_decoder.transformer.layers.#.mlp.lin2.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.layer_norm3.*", canonical: "mask_decoder.transformer.layers.#.norm3.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.layer_norm4.*", canonical: "mask_decoder.transformer.layers.#.norm4.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.cross_attn_image_to_token.q_proj.*",
             canonical: "mask_decoder.transformer.layers.#.cross_attn_image_to_token.q_proj.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.cross_attn_image_to_token.k_proj.*",
             canonical: "mask_decoder.transformer.layers.#.cross_attn_image_to_token.k_proj.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.cross_attn_image_to_token.v_proj.*",
             canonical: "mask_decoder.transformer.layers.#.cross_attn_image_to_token.v_proj.*"),
        Rule(hf: "mask_decoder.transformer.layers.#.cross_attn_image_to_token.out_proj.*",
             canonical: "mask_decoder.transformer.layers.#.cross_attn_image_to_token.out_proj.*"),
        Rule(hf: "mask_decoder.transformer.final_attn_token_to_image.q_proj.*", canonical: "mask_decoder.transformer.final_attn_token_to_image.q_proj.*"),
        Rule(hf: "mask_decoder.transformer.final_attn_token_to_image.k_proj.*", canonical: "mask_decoder.transformer.final_attn_token_to_image.k_proj.*"),
        Rule(hf: "mask_decoder.transformer.final_attn_token_to_image.v_proj.*", canonical: "mask_decoder.transformer.final_attn_token_to_image.v_proj.*"),
        Rule(hf: "mask_decoder.transformer.final_attn_token_to_image.out_proj.*", canonical: "mask_decoder.transformer.final_attn_token_to_image.out_proj.*"),
        Rule(hf: "mask_decoder.transformer.layer_norm_final_attn.*", canonical: "mask_decoder.transformer.norm_final_attn.*"),
        Rule(hf: "mask_decoder.upscale_conv1.*", canonical: "mask_decoder.output_upscaling.0.*"),
        Rule(hf: "mask_decoder.upscale_layer_norm.*", canonical: "mask_decoder.output_upscaling.1.*"),
        Rule(hf: "mask_decoder.upscale_conv2.*", canonical: "mask_decoder.output_upscaling.3.*"),
        // transformers' SamFeedForward: proj_in, hidden `layers`, proj_out = upstream MLP's layers 0, 1.., last.
        Rule(hf: "mask_decoder.output_hypernetworks_mlps.#.proj_in.*", canonical: "mask_decoder.output_hypernetworks_mlps.#.layers.0.*"),
        Rule(hf: "mask_decoder.output_hypernetworks_mlps.#.layers.#.*", canonical: "mask_decoder.output_hypernetworks_mlps.#.layers.#+1.*"),
        Rule(hf: "mask_decoder.output_hypernetworks_mlps.#.proj_out.*", canonical: "mask_decoder.output_hypernetworks_mlps.#.layers.#last.*"),
        Rule(hf: "mask_decoder.iou_prediction_head.proj_in.*", canonical: "mask_decoder.iou_prediction_head.layers.0.*"),
        Rule(hf: "mask_decoder.iou_prediction_head.layers.#.*", canonical: "mask_decoder.iou_prediction_head.layers.#+1.*"),
        Rule(hf: "mask_decoder.iou_prediction_head.proj_out.*", canonical: "mask_decoder.iou_prediction_head.layers.#last.*"),
    ]

    /// Rules of the families whose transformers models extend `SamModel`'s layout (`SamHQModel`):
    /// tried after SAM's own, so they only name the modules SAM lacks.
    static let familyRules: [[Rule]] = [HuggingFaceSamHQNames.rules]

    /// Key prefixes only transformers' layout has: one of them makes a state dict a transformers one.
    static let layoutMarkers = ["vision_encoder.", "shared_image_embedding.", "prompt_encoder.shared_embedding.",
                                "prompt_encoder.point_embed.", "prompt_encoder.mask_embed.", "mask_decoder.upscale_"]

    /// The canonical name each key gets from the first of `rules` that matches it.
    static func canonicalNames(for keys: some Collection<String>, rules: [Rule]) -> [String: String] {
        var names: [String: String] = [:]
        for key in keys {
            for rule in rules {
                if let name = rule.canonicalName(for: key, among: keys) {
                    names[key] = name
                    break
                }
            }
        }
        return names
    }
}

extension HuggingFaceSamNames.Rule {
    static let leaves: Set<Substring> = ["weight", "bias"]

    /// `key` renamed by this rule, or nil when the rule does not match it.
    func canonicalName(for key: String, among keys: some Collection<String>) -> String? {
        let parts = key.split(separator: ".", omittingEmptySubsequences: false)
        let pattern = hf.split(separator: ".")
        guard parts.count == pattern.count else { return nil }
        var indexes: [Int] = [], leaf = ""
        for (part, expected) in zip(parts, pattern) {
            switch expected {
            case "#":
                guard let index = Int(part), index >= 0, String(index) == part else { return nil }
                indexes.append(index)
            case "*":
                guard Self.leaves.contains(part) else { return nil }
                leaf = String(part)
            default:
                guard part == expected else { return nil }
            }
        }
        var used = 0
        func nextIndex() -> Int? {
            defer { used += 1 }
            return used < indexes.count ? indexes[used] : nil
        }
        var output: [String] = []
        for token in canonical.split(separator: ".") {
            switch token {
            case "#":
                guard let index = nextIndex() else { return nil }
                output.append(String(index))
            case "#+1":
                guard let index = nextIndex() else { return nil }
                output.append(String(index + 1))
            case "*": output.append(leaf)
            case "#last": output.append(String(Self.hiddenLayerCount(ofMLP: parts.dropLast(2).joined(separator: "."), in: keys) + 1))
            case "#x3":
                guard let index = nextIndex() else { return nil }
                output.append(String(index * 3))
            case "#x3+1":
                guard let index = nextIndex() else { return nil }
                output.append(String(index * 3 + 1))
            case "#x3last": output.append(String(Self.hiddenLayerCount(ofMLP: parts.dropLast(2).joined(separator: "."), in: keys) * 3))
            default: output.append(String(token))
            }
        }
        return output.joined(separator: ".")
    }

    /// How many `layers.K` a transformers module named `mlp` has in `keys` (a SamFeedForward's hidden
    /// layers, a mask downsampler's steps).
    static func hiddenLayerCount(ofMLP mlp: String, in keys: some Collection<String>) -> Int {
        let prefix = mlp + ".layers."
        var indexes: Set<Substring> = []
        for key in keys where key.hasPrefix(prefix) {
            if let index = key.dropFirst(prefix.count).split(separator: ".").first { indexes.insert(index) }
        }
        return indexes.count
    }
}
