import Foundation
import SAMFiles
import SAMModel
import SAMTensor

/// A model loaded from a .samw file: the runnable model, what the file says about it, and the
/// mapped file itself (which owns the weight bytes the model was built from).
public struct LoadedModel: Sendable {
    /// The runnable model, built from the file's weights (hand it to `Segmenter(model:)` or `TrackingModel(sam:)`).
    public let sam: Sam
    /// What the file says about the model: family, configuration, storage precision, provenance.
    public let metadata: ModelFileMetadata
    /// The mapped `.samw` file; it owns the weight bytes `sam` was built from, so it lives as long as the model.
    public let file: SAMWFile
}

/// The .samw model file: canonical weights (PyTorch state-dict names) plus `ModelFileMetadata`.
public enum ModelFile {
    /// Where the supplied dense positional encoding (`image_points_embeddings.bin`) is stored.
    package static let densePositionalEncodingName = "image_points_embeddings"

    /// Writes `tensors` (sorted by name, so the same inputs give the same file) atomically; `policy`
    /// says what may stand at `path` (see `OutputRule`). A model is always replaced by a rename, never
    /// rewritten in place, so a process that has the old file mapped keeps reading the old file.
    /// `quantized` weights (`--dtype int8|q4`) are written as `q8`/`q4` rows among the rest, in name
    /// order; a file with any is format version 2.
    package static func write(tensors: [String: Tensor], quantized: [String: QuantizedWeight] = [:],
                             densePositionalEncoding: Tensor?, metadata: ModelFileMetadata,
                             to path: String, policy: OutputPolicy = .replace) throws(ModelFileError) {
        try write(rows: tensors.map { SAMWRow(name: $0.key, tensor: $0.value) } + quantized.map { SAMWRow(name: $0.key, quantized: $0.value) },
                  densePositionalEncoding: densePositionalEncoding.map { SAMWRow(name: densePositionalEncodingName, tensor: $0) },
                  metadata: metadata, to: path, policy: policy)
    }

    /// `write(tensors:...)` for rows, held or made as they are written (`SAMWRow`): in name order, the
    /// dense positional encoding (named `densePositionalEncodingName`) last.
    package static func write(rows: [SAMWRow], densePositionalEncoding: SAMWRow?, metadata: ModelFileMetadata,
                             to path: String, policy: OutputPolicy = .replace) throws(ModelFileError) {
        var metadata = metadata
        var ordered = rows.sorted { $0.name < $1.name }
        if let densePositionalEncoding {
            precondition(densePositionalEncoding.name == densePositionalEncodingName, "the dense PE row is named \(densePositionalEncodingName)")
            ordered.append(densePositionalEncoding)
            metadata.densePositionalEncoding = densePositionalEncodingName
        }
        let header: JSONValue
        do {
            header = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(metadata))
        } catch {
            throw .metadata(file: path, "cannot encode: \(error)")
        }
        do { try SAMWWriter.write(rows: ordered, metadata: header, to: path, policy: policy) } catch { throw .format(error) }
    }

    /// Maps the file, checks its table, reads its metadata, checks both and every tensor's checksum
    /// (`checkBeforeBuilding`; `verifyingChecksums: false` skips the checksums) and builds the model
    /// strictly (every stored weight used, every needed one present with its shape).
    public static func load(_ path: String, verifyingChecksums: Bool = true) throws(ModelFileError) -> LoadedModel {
        let file: SAMWFile
        do { file = try SAMWFile(path: path) } catch { throw .format(error) }
        let metadata = try readMetadata(file)
        try checkBeforeBuilding(file, metadata: metadata, verifyingChecksums: verifyingChecksums)
        var tensors: [String: Tensor]
        let quantized: [String: QuantizedWeight]
        do { (tensors, quantized) = (try file.tensors(), try file.quantizedWeights()) } catch { throw .format(error) }
        var densePE: FloatTensor? = nil
        if let name = metadata.densePositionalEncoding {
            guard let tensor = tensors.removeValue(forKey: name) else {
                throw .metadata(file: path, "names dense positional encoding '\(name)', which is not in the tensor table")
            }
            densePE = FloatTensor(tensor)
        }
        do {
            let sam = try Sam(weights: WeightStore(tensors, quantized: quantized, source: path), config: metadata.config, densePositionalEncoding: densePE)
            return LoadedModel(sam: sam, metadata: metadata, file: file)
        } catch {
            throw .weights(file: path, error)
        }
    }

    /// The file's metadata, checked: a schema this code reads, a configuration within `ConfigBounds`
    /// (nothing is allocated from it before), and an encoder family that its configuration agrees
    /// with (a file claiming one encoder is never built as another).
    package static func readMetadata(_ file: SAMWFile) throws(ModelFileError) -> ModelFileMetadata {
        let metadata: ModelFileMetadata
        do {
            metadata = try JSONDecoder().decode(ModelFileMetadata.self, from: JSONEncoder().encode(file.metadata))
        } catch {
            throw .metadata(file: file.path, "not SAM model metadata: \(error)")
        }
        let schema = metadata.schemaVersion ?? 1
        guard schema <= ModelFileMetadata.currentSchemaVersion else {
            throw .metadata(file: file.path, "schema version \(schema) is newer than this reader's "
                + "\(ModelFileMetadata.currentSchemaVersion); convert the model again or update the toolkit")
        }
        do { try metadata.config.validate(file: file.path, components: Set(metadata.components)) } catch {
            throw .metadata(file: file.path, error.message)
        }
        guard metadata.modelFamily == metadata.config.modelFamily else {
            throw .metadata(file: file.path, "names model family '\(metadata.modelFamily)' but its configuration is "
                + "'\(metadata.config.modelFamily)'s")
        }
        guard metadata.imageEncoder == metadata.config.imageEncoder.family else {
            throw .metadata(file: file.path, "names image encoder '\(metadata.imageEncoder)' but its configuration is "
                + "'\(metadata.config.imageEncoder.family)'s")
        }
        return metadata
    }
}
