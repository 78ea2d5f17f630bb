import SAMTensor

/// Every image-encoder family the runtime knows. A new family is new files (its config, its
/// module tree, its conformance to `ImageEncoderFamily`) and one entry here.
public enum ImageEncoderFamilies {
    public static let all: [any ImageEncoderFamily.Type] = [TinyViTFamily.self, ViTFamily.self, HieraFamily.self]

    public static func named(_ name: String) -> (any ImageEncoderFamily.Type)? {
        all.first { $0.name == name }
    }

    public static var names: [String] { all.map { $0.name } }

    /// The configuration of the one family whose encoder the shapes hold (nil when none does;
    /// several would be an ambiguous state dict and give nil too).
    public static func inferConfiguration(fromShapes shapes: [String: [Int]], facts: EncoderFacts,
                                          base: AnyImageEncoderConfig?) -> AnyImageEncoderConfig? {
        let found = all.compactMap { family in infer(family, shapes, facts, base) }
        return found.count == 1 ? found.first : nil
    }

    private static func infer<Family: ImageEncoderFamily>(_ family: Family.Type, _ shapes: [String: [Int]],
                                                          _ facts: EncoderFacts, _ base: AnyImageEncoderConfig?) -> AnyImageEncoderConfig? {
        family.inferConfiguration(fromShapes: shapes, facts: facts, base: base?.as(Family.Configuration.self))
            .map { AnyImageEncoderConfig($0, family: Family.self) }
    }
}
