import Foundation
import SAMFiles
import SAMImage
import SAMModel
import SAMModelFile

/// What image embeddings were computed from: the original image's size, the size it was resized to
/// inside the model's square input, and the model's identity. `samrun` writes it beside
/// `image_embeddings.npy` (in `result.json` and in `image_embeddings.json`); `setEmbeddings` refuses
/// embeddings whose record does not match the image and model at hand.
public struct EmbeddingsProvenance: Codable, Sendable, Equatable {
    /// The photo's size as given.
    public var originalSize: ImageSize
    /// The resized photo's size inside the model's padded square.
    public var inputSize: ImageSize
    /// `ModelFileMetadata.identity` of the model that computed them.
    public var modelIdentity: String
    /// "bfloat16" when the encoder ran the opt-in bfloat16 linear layers; nil (absent) for float32.
    public var linearPrecision: String?
    /// SHA-256 of every feature map the decoder consumes, by feature name (`featureDigests(of:names:)`):
    /// binds the record to the maps themselves, so a map of another image or model put beside the
    /// others (SAM 2's `high_res_feats_*.npy`) is refused. nil in a record made before the maps exist.
    public var featureDigests: [String: String]?

    /// A record of features computed for a photo of `originalSize` by the model `modelIdentity`.
    public init(originalSize: ImageSize, inputSize: ImageSize, modelIdentity: String, linearPrecision: String? = nil,
                featureDigests: [String: String]? = nil) {
        self.originalSize = originalSize
        self.inputSize = inputSize
        self.modelIdentity = modelIdentity
        self.linearPrecision = linearPrecision
        self.featureDigests = featureDigests
    }

    enum CodingKeys: String, CodingKey {
        case originalSize = "original_size", inputSize = "input_size", modelIdentity = "model_identity"
        case linearPrecision = "linear_precision", featureDigests = "feature_sha256"
    }

    /// Each map's SHA-256 over its float32 values in C order, little-endian (the data of its `.npy`
    /// without the header; the shape is checked apart), keyed by `names` in `ImageFeatures.maps` order.
    package static func featureDigests(of features: ImageFeatures, names: [String]) -> [String: String] {
        var digests: [String: String] = [:]
        for (map, name) in zip(features.maps, names) {
            // Every platform the runtime builds for is little-endian: the floats' bytes are the .npy's.
            digests[name] = map.data.withUnsafeBytes { SHA256.hex($0) }
        }
        return digests
    }

    /// This record with the digests of `features` (`names` in their order).
    package func binding(_ features: ImageFeatures, names: [String]) -> EmbeddingsProvenance {
        var bound = self
        bound.featureDigests = Self.featureDigests(of: features, names: names)
        return bound
    }

    /// How `features` differ from the maps this record was written with, one phrase per map; a record
    /// without digests binds none, which is a difference too.
    package func featureDifferences(_ features: ImageFeatures, names: [String]) -> [String] {
        guard let recorded = featureDigests else {
            return ["the record holds no digest of the feature maps (\(names.joined(separator: ", "))), so it cannot tell them from another image's"]
        }
        let actual = Self.featureDigests(of: features, names: names)
        return names.compactMap { name in
            guard let expected = recorded[name] else { return "the record holds no digest of \(name)" }
            return actual[name] == expected ? nil : "\(name) is not the map the record was written with (another image's or model's?)"
        }
    }

    /// How this record differs from `expected`, one phrase per field; empty when they match.
    package func differences(from expected: EmbeddingsProvenance) -> [String] {
        var found: [String] = []
        if originalSize != expected.originalSize {
            found.append("computed for a \(originalSize.width)x\(originalSize.height) image, this image is "
                         + "\(expected.originalSize.width)x\(expected.originalSize.height)")
        }
        if inputSize != expected.inputSize {
            found.append("input size \(inputSize.width)x\(inputSize.height), expected \(expected.inputSize.width)x\(expected.inputSize.height)")
        }
        if modelIdentity != expected.modelIdentity {
            found.append("computed by model \(modelIdentity.prefix(16)), this model is \(expected.modelIdentity.prefix(16))")
        }
        if (linearPrecision ?? "float32") != (expected.linearPrecision ?? "float32") {
            found.append("computed with \(linearPrecision ?? "float32") linear layers, this run uses \(expected.linearPrecision ?? "float32")")
        }
        return found
    }

    // MARK: - The sidecar file

    /// `image_embeddings.json` beside `image_embeddings.npy`: the sidecar of an embeddings file.
    public static func sidecarPath(forEmbeddings path: String) -> String {
        (path.hasSuffix(".npy") ? String(path.dropLast(4)) : path) + ".json"
    }

    /// The sidecar file's bytes (pretty-printed JSON, a newline at the end).
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(File(provenance: self)) + Data([0x0A])
    }

    /// Reads a sidecar; nil when there is none. Only a regular file is read.
    public static func read(sidecar path: String) throws(PipelineError) -> EmbeddingsProvenance? {
        let file: MappedFile
        do { file = try MappedFile(path: path) } catch {
            if error.code == .unreadable, FileIdentity(path: path) == nil { return nil }
            throw .invalidState("embeddings record \(path): \(error.message)")
        }
        let bytes = withExtendedLifetime(file) { Data(file.bytes) }
        do {
            let decoded = try JSONDecoder().decode(File.self, from: bytes)
            guard decoded.kind == File.kindName else {
                throw PipelineError.invalidState("embeddings record \(path) is a '\(decoded.kind)' file, not \(File.kindName)")
            }
            return decoded.provenance
        } catch let error as PipelineError {
            throw error
        } catch {
            throw .invalidState("embeddings record \(path) is not valid: \(error)")
        }
    }

    struct File: Codable {
        static let kindName = "sam_image_embeddings"
        var kind = kindName
        var provenance: EmbeddingsProvenance

        init(provenance: EmbeddingsProvenance) { self.provenance = provenance }

        enum CodingKeys: String, CodingKey { case kind, provenance = "computed_from" }
    }
}
