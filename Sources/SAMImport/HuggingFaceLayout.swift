/// Which Hugging Face `transformers` model a state dict was saved from, told by its keys: SAM 2's
/// (`Sam2Model`, `Sam2VideoModel`) or SAM's (`SamModel`). Upstream-named state dicts are neither.
enum HuggingFaceLayout {
    case sam
    case sam2

    init?(keys: some Collection<String>) {
        // SAM 2's markers first: both layouts have `vision_encoder.` and `prompt_encoder.point_embed.`.
        if HuggingFaceSam2Names.isLayout(keys) { self = .sam2 }
        else if HuggingFaceSamNames.isHuggingFaceLayout(keys) { self = .sam }
        else { return nil }
    }

    var rules: [HuggingFaceSamNames.Rule] {
        switch self {
        case .sam: HuggingFaceSamNames.rules + HuggingFaceSamNames.familyRules.joined()
        case .sam2: HuggingFaceSam2Names.rules
        }
    }

    /// The rule a tensor renamed to `canonical` records: Sam2VideoModel's video weights say so.
    func importRule(renamedTo canonical: String) -> ImportRule {
        switch self {
        case .sam: return .huggingFaceName
        case .sam2:
            let top = String(canonical.prefix { $0 != "." })
            return SAM2Names.videoOnly.contains(top) ? .huggingFaceSam2VideoName : .huggingFaceSam2Name
        }
    }

    /// What an unmapped key is said to be.
    var unmappedContext: String {
        switch self {
        case .sam: "a transformers SamModel (or SamHQModel) key that no rule of HuggingFaceSamNames maps"
        case .sam2: "a transformers Sam2Model or Sam2VideoModel key that no rule of HuggingFaceSam2Names "
            + "(or HuggingFaceSam2VideoNames) maps"
        }
    }

    /// The canonical name (or row pattern, `HuggingFaceSam2Names.rowToken`) of every key a rule
    /// maps; keys missing from the result are unmapped.
    func canonicalNames(for keys: some Collection<String>) -> [String: String] {
        HuggingFaceSamNames.canonicalNames(for: keys, rules: rules)
    }
}
