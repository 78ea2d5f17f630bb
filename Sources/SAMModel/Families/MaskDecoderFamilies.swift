/// Every mask-decoder family the runtime knows, keyed by model family. A new family is new files
/// and one entry here.
public enum MaskDecoderFamilies {
    public static let all: [any MaskDecoderFamily.Type] = [SAMMaskDecoderFamily.self, SAM2MaskDecoderFamily.self]

    /// The decoder family of models of `modelFamily` ("mobile_sam", "sam", "sam2"); nil for none.
    public static func forModelFamily(_ modelFamily: String) -> (any MaskDecoderFamily.Type)? {
        all.first { $0.modelFamilies.contains(modelFamily) }
    }

    /// The decoder family `config` builds: the one of its image encoder's model family.
    public static func family(for config: SAMConfig) -> (any MaskDecoderFamily.Type)? {
        config.imageEncoder.familyType.flatMap { forModelFamily($0.modelFamily) }
    }
}
