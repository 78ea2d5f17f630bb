/// A Hugging Face `transformers` model's state-dict layout: the key prefixes that tell it, the rules
/// renaming its keys to upstream's, and the import rule each renamed tensor records. `all` lists
/// the layouts a state dict is tried against; a family whose transformers model has a layout of
/// its own adds one beside its name rules and a line there. Upstream-named state dicts match none.
struct HuggingFaceLayout: Sendable, Equatable {
    /// The transformers models, for messages ("Sam2Model or Sam2VideoModel").
    let models: String
    /// Key prefixes only this layout has: one of them makes a state dict this layout.
    let markers: [String]
    /// Where the renaming rules are written, for a porter to add a missing one ("HuggingFaceSamNames").
    let tables: String
    /// The renaming rules, tried in order (`HuggingFaceSamNames.canonicalNames(for:rules:)`).
    let rules: [HuggingFaceSamNames.Rule]
    /// Every import rule `importRule(renamedTo:)` gives: how an import is told to be of this layout.
    let importRules: [ImportRule]
    /// The rule a tensor renamed to a canonical name records.
    private let ruleForRenamed: @Sendable (_ canonical: String) -> ImportRule

    /// The layouts a state dict is tried against, in order: SAM 2's first (SamModel's markers
    /// `vision_encoder.` and `prompt_encoder.point_embed.` are in Sam2Model's keys too).
    static let all: [HuggingFaceLayout] = [.sam2, .sam]

    /// The first layout whose markers one of `keys` has, nil for none.
    init?(keys: some Collection<String>) {
        guard let layout = Self.all.first(where: { $0.matches(keys) }) else { return nil }
        self = layout
    }

    init(models: String, markers: [String], tables: String, rules: [HuggingFaceSamNames.Rule], importRules: [ImportRule],
         importRule: @escaping @Sendable (_ canonical: String) -> ImportRule) {
        self.models = models
        self.markers = markers
        self.tables = tables
        self.rules = rules
        self.importRules = importRules
        ruleForRenamed = importRule
    }

    /// The rule a tensor renamed to `canonical` records.
    func importRule(renamedTo canonical: String) -> ImportRule { ruleForRenamed(canonical) }

    static func == (lhs: HuggingFaceLayout, rhs: HuggingFaceLayout) -> Bool { lhs.models == rhs.models }

    /// Whether one of `keys` starts with one of the markers.
    func matches(_ keys: some Collection<String>) -> Bool {
        keys.contains { key in markers.contains { key.hasPrefix($0) } }
    }

    /// What an unmapped key is said to be.
    var unmappedContext: String { "a transformers \(models) key that no rule of \(tables) maps" }

    /// The canonical name (or row pattern, `HuggingFaceSam2Names.rowToken`) of every key a rule
    /// maps; keys missing from the result are unmapped.
    func canonicalNames(for keys: some Collection<String>) -> [String: String] {
        HuggingFaceSamNames.canonicalNames(for: keys, rules: rules)
    }

    /// The layout an import's tensors were renamed by, nil when none was.
    static func of(_ imported: ImportedWeights) -> HuggingFaceLayout? {
        all.first { layout in imported.tensors.values.contains { layout.importRules.contains($0.origin.rule) } }
    }
}

extension HuggingFaceLayout {
    /// transformers' `SamModel`, and the models extending its layout (`SamHQModel`,
    /// `HuggingFaceSamNames.familyRules`).
    static let sam = HuggingFaceLayout(models: "SamModel (or SamHQModel)", markers: HuggingFaceSamNames.layoutMarkers,
                                       tables: "HuggingFaceSamNames (or a family's, HuggingFaceSamNames.familyRules)",
                                       rules: HuggingFaceSamNames.rules + HuggingFaceSamNames.familyRules.joined(),
                                       importRules: [.huggingFaceName]) { _ in .huggingFaceName }

    /// transformers' `Sam2Model` and `Sam2VideoModel`: the video weights say so in their rule.
    static let sam2 = HuggingFaceLayout(models: "Sam2Model or Sam2VideoModel", markers: HuggingFaceSam2Names.layoutMarkers,
                                        tables: "HuggingFaceSam2Names (or HuggingFaceSam2VideoNames)",
                                        rules: HuggingFaceSam2Names.rules,
                                        importRules: [.huggingFaceSam2Name, .huggingFaceSam2VideoName]) { canonical in
        SAM2Names.videoOnly.contains(String(canonical.prefix { $0 != "." })) ? .huggingFaceSam2VideoName : .huggingFaceSam2Name
    }
}
