/// What a model family adds to the mask decoder's configuration (SAM 2's object-score head, sigmoid
/// IoU head, stability fallback ...): a value of the family's own type, stored in `MaskDecoderConfig`
/// and in JSON under the family's own key beside the shared settings. A family lists its types in
/// `ModelFamily.maskDecoderOptions`; the shared configuration names none of them.
package protocol MaskDecoderOptions: Codable, Sendable, Equatable {
    /// The JSON key beside the decoder's shared settings ("sam2").
    static var key: String { get }
    /// What `samconvert`'s summary says of them ("SAM 2: object-score head mlp, ..."), given the names
    /// of the weights converted.
    func summary(weightNames: [String]) -> String
}

/// The family options a decoder configuration holds, at most one value of each type.
package struct FamilyDecoderOptions: Sendable, Equatable {
    private var values: [String: any MaskDecoderOptions] = [:]

    package init() {}

    /// The options of `type`, or nil when the configuration has none.
    package subscript<Options: MaskDecoderOptions>(_ type: Options.Type) -> Options? {
        get { values[Options.key] as? Options }
        set { values[Options.key] = newValue }
    }

    package var isEmpty: Bool { values.isEmpty }

    /// Each value's `summary`, by key.
    package func summaries(weightNames: [String]) -> [String] {
        values.keys.sorted().map { values[$0]!.summary(weightNames: weightNames) }
    }

    /// Every type a listed family declares, by key: what decoding recognises.
    package static var knownTypes: [String: any MaskDecoderOptions.Type] {
        var types: [String: any MaskDecoderOptions.Type] = [:]
        for family in ModelFamilies.all {
            for type in family.maskDecoderOptions { types[type.key] = type }
        }
        return types
    }

    package static func == (lhs: FamilyDecoderOptions, rhs: FamilyDecoderOptions) -> Bool {
        guard lhs.values.keys.sorted() == rhs.values.keys.sorted() else { return false }
        return lhs.values.allSatisfy { key, value in rhs.values[key].map { value.isEqual(to: $0) } ?? false }
    }

    /// Writes each value under its key.
    func encode(into container: inout KeyedEncodingContainer<AnyCodingKey>) throws {
        for key in values.keys.sorted() { try values[key]!.encode(under: key, into: &container) }
    }

    /// The values of every known type whose key `container` holds; other keys are left alone.
    static func decode(from container: KeyedDecodingContainer<AnyCodingKey>) throws -> FamilyDecoderOptions {
        var options = FamilyDecoderOptions()
        for (key, type) in knownTypes {
            let codingKey = AnyCodingKey(key)
            guard container.contains(codingKey) else { continue }
            options.values[key] = try type.decode(under: codingKey, from: container)
        }
        return options
    }
}

extension MaskDecoderOptions {
    fileprivate func isEqual(to other: any MaskDecoderOptions) -> Bool { (other as? Self) == self }

    fileprivate func encode(under key: String, into container: inout KeyedEncodingContainer<AnyCodingKey>) throws {
        try container.encode(self, forKey: AnyCodingKey(key))
    }

    fileprivate static func decode(under key: AnyCodingKey, from container: KeyedDecodingContainer<AnyCodingKey>) throws -> Self {
        try container.decode(Self.self, forKey: key)
    }
}

/// A JSON key known only at run time (a family's options key).
package struct AnyCodingKey: CodingKey {
    package let stringValue: String
    package var intValue: Int? { nil }
    package init(_ string: String) { stringValue = string }
    package init?(stringValue: String) { self.stringValue = stringValue }
    package init?(intValue: Int) { nil }
}
