/// Turns a dynamo placeholder's flattened parameter path back into a dotted one:
/// `mask_decoder_transformer_layers_0_self_attn_q_proj_weight` ->
/// `mask_decoder.transformer.layers.0.self_attn.q_proj.weight`.
///
/// Underscores are both separators and parts of attribute names, so the split is decided by a
/// vocabulary of the attribute names SAM modules use that contain underscores, plus those found
/// in the file's own dotted names (which also teaches it attributes this list does not hold).
/// Reading left to right, the longest vocabulary word that matches wins; every other token is a
/// segment of its own.
struct FlattenedParameterNames {
    /// Attribute names with underscores in upstream SAM, MobileSAM and TinyViT modules.
    /// ref: segment_anything/modeling/{sam,prompt_encoder,mask_decoder,transformer,image_encoder}.py,
    /// mobile_sam/modeling/tiny_vit_sam.py, torch.nn.BatchNorm2d buffers.
    static let knownWords: [String] = [
        "image_encoder", "prompt_encoder", "mask_decoder",
        "pe_layer", "positional_encoding_gaussian_matrix", "point_embeddings", "not_a_point_embed",
        "mask_downscaling", "no_mask_embed",
        "iou_token", "mask_tokens", "output_upscaling", "output_hypernetworks_mlps", "iou_prediction_head",
        "self_attn", "cross_attn_token_to_image", "cross_attn_image_to_token", "final_attn_token_to_image",
        "norm_final_attn", "q_proj", "k_proj", "v_proj", "out_proj",
        "patch_embed", "norm_head", "local_conv", "attention_biases", "attention_bias_idxs",
        "pos_embed", "rel_pos_h", "rel_pos_w",
        "running_mean", "running_var", "num_batches_tracked",
    ]

    /// Vocabulary words as token sequences, longest first.
    private let words: [[String]]

    /// `dottedNames`: names the file spells with dots (initializers that kept their PyTorch names).
    init(dottedNames: [String]) {
        var vocabulary = Set(Self.knownWords)
        for name in dottedNames {
            for segment in name.split(separator: ".") where segment.contains("_") { vocabulary.insert(String(segment)) }
        }
        words = vocabulary.map { $0.split(separator: "_").map(String.init) }.sorted { $0.count > $1.count }
    }

    /// The dotted path, or nil for an empty name.
    func dotted(_ flattened: String) -> String? {
        let tokens = flattened.split(separator: "_", omittingEmptySubsequences: false).map(String.init)
        guard !tokens.isEmpty, !tokens.contains(where: \.isEmpty) else { return nil }
        var segments: [String] = []
        var position = 0
        while position < tokens.count {
            let word = words.first { word in
                position + word.count <= tokens.count && Array(tokens[position..<(position + word.count)]) == word
            }
            let length = word?.count ?? 1
            segments.append(tokens[position..<(position + length)].joined(separator: "_"))
            position += length
        }
        return segments.joined(separator: ".")
    }
}
