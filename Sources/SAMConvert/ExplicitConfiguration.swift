import Foundation
import SAMImport
import SAMModel

/// The config file a conversion is given (`--config`, or a `config.json` in an input folder): this
/// toolkit's `SAMConfig` JSON, or the config.json `transformers` saves beside a `Sam2Model` /
/// `Sam2VideoModel` checkpoint (`model_type` "sam2" / "sam2_video"), read as that model is built.
/// A transformers file of another model (`SamModel` ...) is refused with what to do instead.
public struct ExplicitConfiguration: Sendable {
    public let file: String
    public let config: SAMConfig
    /// The transformers file it was read from, kept to hold its video sizes to the weights.
    public let transformers: TransformersSam2Config?

    public init(contentsOf path: String) throws(ConversionFailure) {
        file = path
        let data: Data
        do { data = try ConfigFile.contents(of: path, limit: SAMConfig.maximumFileBytes) } catch { throw ConversionFailure("\(error)") }
        guard let modelType = TransformersSam2Config.modelType(of: data) else {
            do { config = try SAMConfig(json: data, file: path) } catch { throw ConversionFailure("\(error)") }
            transformers = nil
            return
        }
        guard TransformersSam2Config.modelTypes.contains(modelType) else {
            throw ConversionFailure("\(path): a transformers config.json of model_type \"\(modelType)\"; only Sam2Model's and "
                                    + "Sam2VideoModel's are read (convert model.safetensors by itself, or give --config)")
        }
        do {
            let read = try TransformersSam2Config(data: data)
            config = try read.samConfig(file: path)
            transformers = read
        } catch let error as ConfigError {
            throw ConversionFailure("\(error)")
        } catch {
            throw ConversionFailure("\(path): not a transformers \(modelType) config: \(error)")
        }
    }

    /// The video sizes a transformers file states that the weights contradict: an error naming the
    /// file, each field and each tensor (under the name the weights file gives it).
    func checkVideo(against imported: ImportedWeights) throws(ConversionFailure) {
        guard let transformers else { return }
        let disagreements = transformers.videoDisagreements(withShapes: imported.tensors.mapValues(\.shape))
        guard !disagreements.isEmpty else { return }
        let lines = disagreements.map { disagreement -> String in
            let stored = imported.tensors[disagreement.tensor].flatMap { tensor in
                tensor.origin.sources.first.map { "\($0) in \(tensor.origin.file)" }
            }
            return "\(disagreement)" + (stored.map { " (\($0))" } ?? "")
        }
        throw ConversionFailure("\(file): the transformers config's video fields disagree with the weights:\n  "
                                + lines.joined(separator: "\n  "))
    }
}
