import Foundation
import SAMFiles
import SAMModel

/// What a .samw file says about the model it holds (the `metadata` object of its header;
/// see docs/samw-format.md). Everything needed to rebuild the model without another file.
public struct ModelFileMetadata: Codable, Sendable, Equatable {
    /// The metadata layout this file follows; files without it are version 1 (MobileSAM only).
    public var schemaVersion: Int?
    /// The model family (`ModelFamilies`: "mobile_sam", "sam", "sam2"); the config's.
    public var modelFamily: String
    /// The image encoder's family (`ImageEncoderFamilies`: "tiny_vit", "vit"); must equal the config's.
    public var imageEncoder: String
    /// Architecture hyperparameters and the accepted point-count range (minPoints...maxPoints).
    public var config: SAMConfig
    /// The components present: image_encoder, prompt_encoder, mask_decoder.
    public var components: [String]
    /// "f32" or "f16": how the weights are stored (the runtime computes in f32 either way).
    public var weightDType: String
    /// Name of the supplied dense positional encoding tensor (`image_points_embeddings.bin`), if any.
    public var densePositionalEncoding: String?
    /// Which converter wrote the file and the files it was converted from.
    public var provenance: Provenance

    /// The newest schema version this code reads and writes. Version 3 names a model family that is
    /// not its image encoder's plain one (SAM-HQ), which version-2 readers would build as that one:
    /// only such files are written as 3, so the rest still load in earlier readers. Version 4 holds
    /// SAM 2's video modules (component `video`, config `video`), which earlier readers would refuse
    /// as unused weights.
    public static let currentSchemaVersion = 4

    /// The version a file of `config` is written with.
    package static func schemaVersion(for config: SAMConfig) -> Int {
        config.videoMode != nil ? 4 : config.modelFamilyName == nil ? 2 : 3
    }

    /// Model family and encoder name come from the config.
    package init(config: SAMConfig, components: [String], weightDType: String, densePositionalEncoding: String?,
                provenance: Provenance) {
        schemaVersion = Self.schemaVersion(for: config)
        modelFamily = config.modelFamily
        imageEncoder = config.imageEncoder.family
        self.config = config
        self.components = components
        self.weightDType = weightDType
        self.densePositionalEncoding = densePositionalEncoding
        self.provenance = provenance
    }
}

extension ModelFileMetadata {
    /// What this model is, as 64 hex digits: SHA-256 over the SHA-256 of every file it was converted
    /// from (paths left out), the storage precision, the components and the architecture. Files converted
    /// from the same exports the same way share it; embeddings record it (`samrun`, `setEmbeddings`).
    public var identity: String {
        struct Identity: Encodable {
            var sources: [String]
            var weightDType: String
            var components: [String]
            var config: SAMConfig
            var densePositionalEncoding: String?
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let record = Identity(sources: provenance.sources.map(\.sha256), weightDType: weightDType, components: components,
                              config: config, densePositionalEncoding: densePositionalEncoding)
        // Encoding plain strings, numbers and arrays cannot fail; an empty record still hashes.
        let bytes = (try? encoder.encode(record)) ?? Data()
        return bytes.withUnsafeBytes { SHA256.hex($0) }
    }
}

/// Where a model file came from: the converter that wrote it and every file it was converted from.
public struct Provenance: Codable, Sendable, Equatable {
    /// The converter's name ("samconvert").
    public var converter: String
    /// The converter's version.
    public var converterVersion: String
    /// The files converted (checkpoints, exports, a config), in the order given.
    public var sources: [SourceFile]

    package init(converter: String, converterVersion: String, sources: [SourceFile]) {
        self.converter = converter
        self.converterVersion = converterVersion
        self.sources = sources
    }
}

/// One file a model was converted from, as `Provenance.sources` lists it.
public struct SourceFile: Codable, Sendable, Equatable {
    /// The path as given to the converter.
    public var path: String
    /// The file's SHA-256, 64 lowercase hex digits; `ModelFileMetadata.identity` is made from these.
    public var sha256: String
    /// The file's size in bytes.
    public var bytes: Int
    /// How the file stored the weights taken from it ("f32", "f16", "i8 per-channel (MatMulInteger)"
    /// ...): a model made from quantized or half-precision weights says so. nil for files that
    /// supplied no weights (a config) and in files written before this was recorded.
    public var weightsStoredAs: [String]?

    package init(path: String, sha256: String, bytes: Int) {
        self.path = path
        self.sha256 = sha256
        self.bytes = bytes
    }
}
