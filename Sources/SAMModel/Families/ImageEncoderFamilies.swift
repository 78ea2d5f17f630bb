import SAMTensor

/// Every image-encoder family the runtime knows. A new family is new files (its config, its
/// module tree, its conformance to `ImageEncoderFamily`) and one entry here.
package enum ImageEncoderFamilies {
    package static let all: [any ImageEncoderFamily.Type] = [TinyViTFamily.self, ViTFamily.self, HieraFamily.self, EfficientViTFamily.self]

    package static func named(_ name: String) -> (any ImageEncoderFamily.Type)? {
        all.first { $0.name == name }
    }

    package static var names: [String] { all.map { $0.name } }

    /// The configuration of the one family whose encoder the shapes hold; nil when they hold no
    /// image-encoder weights at all (a decoder-only export). Encoder weights that no family reads,
    /// or that several read, are an error naming the candidates: never another family's defaults.
    package static func inferConfiguration(fromShapes shapes: [String: [Int]], facts: EncoderFacts,
                                          base: AnyImageEncoderConfig?) throws(FamilyChoiceError) -> AnyImageEncoderConfig? {
        let found = all.compactMap { family in infer(family, shapes, facts, base) }
        if found.count == 1 { return found[0] }
        guard found.isEmpty else { throw FamilyChoiceError(imageEncoderCandidates: found.map(\.family)) }
        // Only the encoder's own weights count: SAM 2's decoder-side projections belong to its encoder.
        let encoderKeys = shapes.keys.filter { $0.hasPrefix(Sam.imageEncoderKey + ".") }
        guard encoderKeys.isEmpty else { throw FamilyChoiceError(imageEncoderCandidates: [], example: encoderKeys.min()) }
        return nil
    }

    private static func infer<Family: ImageEncoderFamily>(_ family: Family.Type, _ shapes: [String: [Int]],
                                                          _ facts: EncoderFacts, _ base: AnyImageEncoderConfig?) -> AnyImageEncoderConfig? {
        family.inferConfiguration(fromShapes: shapes, facts: facts, base: base?.as(Family.Configuration.self))
            .map { AnyImageEncoderConfig($0, family: Family.self) }
    }
}
