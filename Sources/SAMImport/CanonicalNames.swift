/// The three parts of a `Sam` model; canonical names start with one of them, as in the
/// PyTorch state dict of the full model (`image_encoder.layers.1.blocks.0.attn.qkv.weight`).
public enum SAMComponent: String, CaseIterable, Sendable, Comparable {
    case imageEncoder = "image_encoder"
    case promptEncoder = "prompt_encoder"
    case maskDecoder = "mask_decoder"

    public static func < (lhs: SAMComponent, rhs: SAMComponent) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// The component a canonical name belongs to.
    public static func of(_ canonicalName: String) -> SAMComponent? {
        let head = canonicalName.prefix { $0 != "." }
        return SAMComponent(rawValue: String(head))
    }
}

/// A dotted module or parameter path resolved to its canonical form.
public struct CanonicalPath: Sendable, Equatable {
    public let component: SAMComponent
    /// Full canonical path, starting with the component (`mask_decoder.transformer.layers.0`).
    public let path: String
    /// What was stripped in front (`md.`, `model.`, or "" when none).
    public let wrapperPrefix: String
}

/// Turns exporter names and module scopes into canonical names.
///
/// Exports name things relative to whatever module was exported: the whole `Sam`
/// (`image_encoder.neck.0.weight`), a wrapper holding a part (`md.transformer...`,
/// `model.prompt_encoder...`), or the part itself (`neck.0.weight`, `layers.1...`). The first
/// segment that is a component name or the first child of one tells where the name starts.
public enum CanonicalNames {
    /// First-level children of each component, i.e. what a module-relative name starts with.
    /// ref: mobile_sam/modeling/tiny_vit_sam.py TinyViT.__init__, prompt_encoder.py PromptEncoder.__init__,
    /// mask_decoder.py MaskDecoder.__init__; `blocks`/`pos_embed` are SAM's ViT-B/L/H encoder (image_encoder.py).
    public static let componentChildren: [String: SAMComponent] = samComponentChildren.merging(
        familyComponentChildren.joined().map { ($0.key, $0.value) }, uniquingKeysWith: { sam, _ in sam })

    /// The first-level children of SAM's own components (TinyViT's, the ViT's, SAM's decoder's).
    static let samComponentChildren: [String: SAMComponent] = [
        "patch_embed": .imageEncoder, "layers": .imageEncoder, "neck": .imageEncoder,
        "head": .imageEncoder, "norm_head": .imageEncoder,
        "blocks": .imageEncoder, "pos_embed": .imageEncoder,
        "pe_layer": .promptEncoder, "point_embeddings": .promptEncoder, "not_a_point_embed": .promptEncoder,
        "mask_downscaling": .promptEncoder, "no_mask_embed": .promptEncoder,
        "transformer": .maskDecoder, "iou_token": .maskDecoder, "mask_tokens": .maskDecoder,
        "output_upscaling": .maskDecoder, "output_hypernetworks_mlps": .maskDecoder,
        "iou_prediction_head": .maskDecoder,
    ]

    /// First-level children of the families whose components have others (an encoder exported on its
    /// own names its weights and scopes from them): one table per family, never overriding SAM's.
    static let familyComponentChildren: [[String: SAMComponent]] = [
        EfficientViTONNXNames.encoderChildren, SAMHQONNXNames.decoderChildren,
    ]

    /// Last segments that name a parameter or buffer of a SAM module. A name ending otherwise
    /// (`...c.weight_bias`, `val_118`) is an exporter's invention and is mapped by its consumer.
    public static let parameterLeaves: Set<String> = [
        "weight", "bias", "running_mean", "running_var", "num_batches_tracked",
        "attention_biases", "attention_bias_idxs", "ab",
        "positional_encoding_gaussian_matrix", "pos_embed", "rel_pos_h", "rel_pos_w",
        "pos_embed_window",  // SAM 2's Hiera
    ]

    /// The parameter leaves that hold floats (the others, `num_batches_tracked` and
    /// `attention_bias_idxs`, are integer buffers).
    public static let floatLeaves: Set<String> = parameterLeaves.subtracting(["num_batches_tracked", "attention_bias_idxs"])

    /// Resolves a dotted module or parameter path; nil when no segment starts a canonical name.
    public static func resolve(_ dotted: String) -> CanonicalPath? {
        let parts = dotted.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (index, part) in parts.enumerated() {
            let prefix = parts[..<index].map { $0 + "." }.joined()
            if let component = SAMComponent(rawValue: part) {
                return CanonicalPath(component: component, path: parts[index...].joined(separator: "."), wrapperPrefix: prefix)
            }
            if let component = componentChildren[part] {
                return CanonicalPath(component: component,
                                     path: component.rawValue + "." + parts[index...].joined(separator: "."),
                                     wrapperPrefix: prefix)
            }
        }
        return nil
    }

    /// Resolves a tensor name that keeps its PyTorch parameter path (possibly under a wrapper prefix).
    public static func resolveParameter(_ name: String) -> CanonicalPath? {
        guard let leaf = name.split(separator: ".").last, parameterLeaves.contains(String(leaf)),
              let resolved = resolve(name), resolved.path.contains(".") else { return nil }
        return resolved
    }

    /// The last segment of a dotted path.
    static func leaf(_ path: String) -> String {
        guard let dot = path.lastIndex(of: ".") else { return path }
        return String(path[path.index(after: dot)...])
    }
}
