import Foundation
import SAMImage
import SAMTensor

/// An image encoder's configuration of any family, with the family's name. Encoded as the
/// family's own keys plus `"family"`; a configuration without that key (written before families
/// existed) is MobileSAM's TinyViT.
public struct AnyImageEncoderConfig: Codable, Sendable, Equatable {
    /// The image-encoder family's name, as a `.samw` stores it: `tiny_vit`, `vit`, `hiera`, `efficientvit`.
    public let family: String
    package private(set) var base: any ImageEncoderConfiguration

    package init<Family: ImageEncoderFamily>(_ config: Family.Configuration, family: Family.Type) {
        self.family = Family.name
        base = config
    }

    /// The configuration as `type`, or nil for another family's.
    package func `as`<Configuration: ImageEncoderConfiguration>(_ type: Configuration.Type) -> Configuration? {
        base as? Configuration
    }

    /// Side of the square model input, in pixels.
    public var imageSize: Int {
        get { base.imageSize }
        set { base.imageSize = newValue }
    }
    package var promptFrameSize: Int { base.promptFrameSize }
    /// How the family's predictor maps photos, prompts and masks (`ImageEncoderConfiguration.inputTransform`).
    package var inputTransform: InputTransform { base.inputTransform }
    /// Channels of the image embedding (the neck's output).
    public var embeddingDim: Int { base.embeddingDim }
    /// Side of the image embedding grid: the embedding is [1, `embeddingDim`, g, g].
    public var embeddingGridSize: Int { base.embeddingGridSize }
    package var preprocessing: ImagePreprocessing {
        get { base.preprocessing }
        set { base.preprocessing = newValue }
    }
    /// One line for listings ("TinyViT 1024x1024, dims [64, 128, 160, 320] ...").
    public var summary: String { base.summary }
    /// The names of the encoder's outputs, embedding first (`ImageFeatures.maps` order): SAM's
    /// `image_embeddings`; SAM 2's `image_embed`, `high_res_feats_0`, `high_res_feats_1`.
    public var featureNames: [String] { base.featureNames }
    package var featureShapes: [[Int]] { base.featureShapes }
    package var runtimeBatchNormEps: Double? { base.runtimeBatchNormEps }

    /// The family this configuration belongs to (nil only for a name no family has, which decoding refuses).
    package var familyType: (any ImageEncoderFamily.Type)? { ImageEncoderFamilies.named(family) }

    /// The encoder this configuration describes, built from the weights under `prefix`.
    package func makeEncoder(weights: WeightStore, prefix: String) throws(WeightError) -> any ImageEncoder {
        guard let family = ImageEncoderFamilies.named(family) else {
            throw .invalid(key: prefix, reason: "unknown image encoder family '\(family)'", source: weights.source)
        }
        return try Self.make(family, base, weights: weights, prefix: prefix)
    }

    private static func make<Family: ImageEncoderFamily>(_ family: Family.Type, _ config: any ImageEncoderConfiguration,
                                                         weights: WeightStore, prefix: String) throws(WeightError) -> any ImageEncoder {
        guard let typed = config as? Family.Configuration else {
            throw .invalid(key: prefix, reason: "configuration is not \(Family.name)'s", source: weights.source)
        }
        return try Family.makeEncoder(weights: weights, prefix: prefix, config: typed)
    }

    // MARK: Codable

    private enum FamilyKey: String, CodingKey { case family }

    /// Reads the family's own keys and `"family"`; without that key, MobileSAM's TinyViT.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: FamilyKey.self)
        let name = try container.decodeIfPresent(String.self, forKey: .family) ?? TinyViTFamily.name
        guard let family = ImageEncoderFamilies.named(name) else {
            throw DecodingError.dataCorruptedError(forKey: .family, in: container, debugDescription:
                "unknown image encoder family '\(name)' (known: \(ImageEncoderFamilies.names.joined(separator: ", ")))")
        }
        self.family = name
        base = try Self.decode(family, from: decoder)
    }

    private static func decode<Family: ImageEncoderFamily>(_ family: Family.Type, from decoder: any Decoder) throws
        -> any ImageEncoderConfiguration {
        try Family.Configuration(from: decoder)
    }

    /// Writes the family's own keys and `"family"`.
    public func encode(to encoder: any Encoder) throws {
        try base.encode(to: encoder)
        var container = encoder.container(keyedBy: FamilyKey.self)
        try container.encode(family, forKey: .family)
    }

    /// Equal when the family and every setting of the configuration are.
    public static func == (lhs: AnyImageEncoderConfig, rhs: AnyImageEncoderConfig) -> Bool {
        lhs.family == rhs.family && lhs.base.isEqual(to: rhs.base)
    }
}

extension ImageEncoderConfiguration {
    fileprivate func isEqual(to other: any ImageEncoderConfiguration) -> Bool {
        (other as? Self) == self
    }
}
