/// SAM 2 / 2.1 checkpoint keys (`SAM2Base.state_dict()`, under "model" in the published `.pt`
/// files) to canonical names. The image encoder's keys are canonical as they are
/// (`image_encoder.trunk.*`, `image_encoder.neck.*`); the prompt encoder and mask decoder drop
/// their `sam_` prefix so SAM's modules and names serve both (`sam_mask_decoder.transformer...` ->
/// `mask_decoder.transformer...`); `no_mem_embed`, which image mode adds to the embedding, keeps
/// its name. What only video mode runs (memory attention and encoder, object pointers, the mask
/// downsampler, memory position encodings) keeps its name too (`SAM2VideoModules` reads it); an
/// ONNX graph's copy of such a weight is left out with a note.
/// ref: sam2/modeling/sam2_base.py SAM2Base.__init__, _build_sam_heads
public enum SAM2Names {
    /// SAM2Base's prompt encoder and mask decoder attributes, and their canonical components.
    public static let renamedComponents = ["sam_prompt_encoder": "prompt_encoder", "sam_mask_decoder": "mask_decoder"]
    /// SAM2Base's own parameters that image mode uses, canonical as they are.
    public static let imageModeParameters: Set<String> = ["no_mem_embed"]
    /// SAM2Base's modules and parameters only video mode uses.
    public static let videoOnly: Set<String> = [
        "memory_attention", "memory_encoder", "obj_ptr_proj", "obj_ptr_tpos_proj", "mask_downsample",
        "maskmem_tpos_enc", "no_mem_pos_enc", "no_obj_ptr", "no_obj_embed_spatial",
    ]

    /// The Hiera trunk's module path.
    public static let hieraTrunk = "image_encoder.trunk"
    /// Hiera's position embedding as an export folds it: `_get_pos_embed((H, W))` [1, H, W, C], the
    /// background resized and the window tiled, computed once by the exporter. A derived value with
    /// no PyTorch name (the runtime's observers report it as the trunk's `:pos_embed`).
    public static let foldedPositionEmbedding = "image_encoder.trunk:pos_embed"

    public enum Resolution: Equatable, Sendable {
        /// The canonical name, and the wrapper prefix stripped in front of the SAM 2 name.
        case canonical(String, wrapperPrefix: String)
        /// A weight only video mode runs: its name, the wrapper prefix stripped.
        case videoOnly(String, wrapperPrefix: String)
    }

    /// The canonical name of an exported parameter that keeps a SAM 2-only name (samexporter's
    /// encoder export: `model.sam_mask_decoder.conv_s0.weight`, `no_mem_embed`); nil otherwise.
    public static func parameterPath(_ name: String) -> String? {
        guard case .canonical(let path, _) = resolve(name) else { return nil }
        let leaf = path.split(separator: ".").last.map(String.init) ?? path
        return imageModeParameters.contains(path) || CanonicalNames.parameterLeaves.contains(leaf) ? path : nil
    }

    /// The resolution of `key` when it holds a SAM 2-only name (possibly under a wrapper prefix
    /// such as `model.`); nil for every other key, which the generic rules take.
    public static func resolve(_ key: String) -> Resolution? {
        let parts = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (index, part) in parts.enumerated() {
            let prefix = parts[..<index].map { $0 + "." }.joined()
            if let component = renamedComponents[part], index + 1 < parts.count {
                return .canonical(([component] + parts[(index + 1)...]).joined(separator: "."), wrapperPrefix: prefix)
            }
            if imageModeParameters.contains(part), index == parts.count - 1 { return .canonical(part, wrapperPrefix: prefix) }
            if videoOnly.contains(part) { return .videoOnly(parts[index...].joined(separator: "."), wrapperPrefix: prefix) }
            // A canonical component or a SAM module further along means this is not a SAM 2-only name.
            if ["image_encoder", "prompt_encoder", "mask_decoder"].contains(part) { return nil }
        }
        return nil
    }
}
