import SAMTensor

/// One family of whole models (MobileSAM, SAM, SAM 2, SAM-HQ ...): which image encoders its
/// checkpoints come with, which mask decoder it runs, what its encoder hands the decoder, and how
/// its weights are told from another family's. `ModelFamilies.all` lists them; a `.samw` and a
/// config.json name theirs (`SAMConfig.modelFamily`). A family may reuse another's parts: SAM-HQ
/// runs SAM's ViT or MobileSAM's TinyViT with a decoder of its own.
package protocol ModelFamily: SendableMetatype {
    /// The name a `.samw`'s metadata and a config.json's `modelFamily` carry ("mobile_sam", "sam").
    static var name: String { get }
    /// The image-encoder families its checkpoints come with; the first is the default one.
    static var imageEncoderFamilies: [any ImageEncoderFamily.Type] { get }
    /// The mask decoder it runs (and so the prompt layout and the predictor's output rules).
    static var maskDecoderFamily: any MaskDecoderFamily.Type { get }
    /// Canonical weight names (or prefixes ending in ".") that only this family's weights hold: how
    /// its weights are told from another family's on the same encoder. Empty for a family that adds
    /// nothing to its encoder family's plain model.
    static var distinguishingKeys: [String] { get }
    /// What the family adds to the mask decoder's configuration, each type under its own JSON key
    /// (`MaskDecoderConfig.familyOptions`); empty for a family that adds nothing.
    static var maskDecoderOptions: [any MaskDecoderOptions.Type] { get }

    /// The image encoder built strictly from the weights under `prefix`.
    static func makeImageEncoder(weights: WeightStore, prefix: String, config: SAMConfig) throws(WeightError) -> any ImageEncoder
    /// The names of what the encoder hands the decoder, embedding first (`ImageFeatures.maps`
    /// order), as reference sets and `samrun` name their files.
    static func featureNames(_ config: SAMConfig) -> [String]
    /// The shape of each of `featureNames`.
    static func featureShapes(_ config: SAMConfig) -> [[Int]]
    /// The configuration's sizes read from the weights' shapes beyond what the encoder family and
    /// SAM's prompt encoder and decoder read (SAM 2's decoder options); `config` is the rest, inferred.
    static func refine(_ config: inout SAMConfig, fromShapes shapes: [String: [Int]])
    /// The configuration inference starts from when weights that come without a config are
    /// recognisably this family's by their keys alone (so a decoder-only export is not read with
    /// another family's sizes); nil when they are not, or when the family has no such keys.
    static func inferenceBase(fromShapes shapes: [String: [Int]]) -> SAMConfig?
}

extension ModelFamily {
    package static var distinguishingKeys: [String] { [] }
    package static var maskDecoderOptions: [any MaskDecoderOptions.Type] { [] }

    /// The configured encoder family's encoder.
    package static func makeImageEncoder(weights: WeightStore, prefix: String, config: SAMConfig) throws(WeightError) -> any ImageEncoder {
        try config.imageEncoder.makeEncoder(weights: weights, prefix: prefix)
    }

    package static func featureNames(_ config: SAMConfig) -> [String] { config.imageEncoder.featureNames }
    package static func featureShapes(_ config: SAMConfig) -> [[Int]] { config.imageEncoder.featureShapes }
    package static func refine(_ config: inout SAMConfig, fromShapes shapes: [String: [Int]]) {}
    package static func inferenceBase(fromShapes shapes: [String: [Int]]) -> SAMConfig? { nil }

    /// Whether `key` is one of `distinguishingKeys`.
    static func distinguishes(_ key: String) -> Bool {
        distinguishingKeys.contains { $0.hasSuffix(".") ? key.hasPrefix($0) : key == $0 }
    }

    /// How well weights with `keys` and an encoder of `encoderFamily` fit this family: nil when they
    /// cannot be its (another encoder family, or none of its distinguishing keys); else 1 plus the
    /// number of its distinguishing keys present, so a family that adds to a plain one wins over it.
    static func fit(keys: some Sequence<String>, encoderFamily: String) -> Int? {
        guard imageEncoderFamilies.contains(where: { $0.name == encoderFamily }) else { return nil }
        guard !distinguishingKeys.isEmpty else { return 1 }
        let present = keys.reduce(0) { $0 + (distinguishes($1) ? 1 : 0) }
        return present > 0 ? 1 + present : nil
    }
}

/// Every model family the runtime knows. A new family is a folder of new files and one line here.
package enum ModelFamilies {
    package static let all: [any ModelFamily.Type] = [
        MobileSAMModelFamily.self, SAMModelFamily.self, SAM2ModelFamily.self, SAMHQModelFamily.self, EfficientViTSAMModelFamily.self,
    ]

    package static func named(_ name: String) -> (any ModelFamily.Type)? {
        all.first { $0.name == name }
    }

    package static var names: [String] { all.map { $0.name } }

    /// `base`, or the base of the first family whose keys the weights have when `base`'s encoder is
    /// not one of that family's (`ModelFamily.inferenceBase`), keeping `base`'s point range.
    package static func inferenceBase(_ base: SAMConfig, shapes: [String: [Int]]) -> SAMConfig {
        for family in all where !family.imageEncoderFamilies.contains(where: { $0.name == base.imageEncoder.family }) {
            guard var config = family.inferenceBase(fromShapes: shapes) else { continue }
            config.minPoints = base.minPoints
            config.maxPoints = base.maxPoints
            return config
        }
        return base
    }

    /// The family of a plain model with an encoder of `encoderFamily` (MobileSAM for TinyViT): the
    /// first listed that takes that encoder and adds nothing to it. Files written before model
    /// families were named take this one.
    package static func plain(encoderFamily: String) -> (any ModelFamily.Type)? {
        all.first { family in
            family.distinguishingKeys.isEmpty && family.imageEncoderFamilies.first?.name == encoderFamily
        }
    }

    /// The family whose weights `keys` are, given the encoder family: the best fit among `families`
    /// (`ModelFamily.fit`). Several at the best fit is an error listing them; none is an error too.
    package static func bestFit(keys: Set<String>, encoderFamily: String,
                               among families: [any ModelFamily.Type] = all) -> Result<any ModelFamily.Type, FamilyChoiceError> {
        let scored = families.compactMap { family in family.fit(keys: keys, encoderFamily: encoderFamily).map { (family, $0) } }
        guard let best = scored.map(\.1).max() else {
            return .failure(FamilyChoiceError(encoderFamily: encoderFamily, candidates: []))
        }
        let top = scored.filter { $0.1 == best }.map(\.0)
        guard top.count == 1, let chosen = top.first else {
            return .failure(FamilyChoiceError(encoderFamily: encoderFamily, candidates: top.map { $0.name }))
        }
        return .success(chosen)
    }
}

/// Weights no single model family (or image-encoder family) claims.
package struct FamilyChoiceError: Error, CustomStringConvertible, Equatable, Sendable {
    package let encoderFamily: String
    /// The families that fit equally well; empty when none does.
    package let candidates: [String]
    /// Whether the choice was of the image encoder's family (`ImageEncoderFamilies`), not the model's.
    package let ofImageEncoder: Bool
    /// An image-encoder weight no family reads, when none does.
    package let example: String?

    init(encoderFamily: String, candidates: [String]) {
        (self.encoderFamily, self.candidates, ofImageEncoder, example) = (encoderFamily, candidates, false, nil)
    }

    init(imageEncoderCandidates: [String], example: String? = nil) {
        (encoderFamily, candidates, ofImageEncoder, self.example) = ("", imageEncoderCandidates, true, example)
    }

    package var description: String {
        if ofImageEncoder {
            return candidates.isEmpty
                ? "no image-encoder family reads these weights (\(example ?? "image_encoder.*") among them; known: "
                    + ImageEncoderFamilies.names.joined(separator: ", ") + "); give a config file or a family this toolkit ports"
                : "the image-encoder weights fit families \(candidates.joined(separator: ", ")) equally well; "
                    + "name one with \"family\" in a config file's imageEncoder"
        }
        return candidates.isEmpty
            ? "no model family runs an image encoder of family '\(encoderFamily)' with these weights "
                + "(known: \(ModelFamilies.names.joined(separator: ", ")))"
            : "the weights fit model families \(candidates.joined(separator: ", ")) equally well; "
                + "name one with \"modelFamily\" in a config file"
    }
}
