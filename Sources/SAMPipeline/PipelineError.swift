import SAMImage
import SAMModel
import SAMModelFile

/// Why a segmentation request was refused; the message says what to fix.
public enum PipelineError: Error, CustomStringConvertible {
    /// The model file could not be loaded (`ModelFile.load`'s error, naming the file).
    case model(ModelFileError)
    /// The image could not be prepared, or masks not brought to its size.
    case image(ImageError)
    /// The model refused to run (a component missing, an input of the wrong shape).
    case run(SamError)
    /// A prompt outside the image, a malformed box, a point count the model does not accept ...
    case invalidPrompt(String)
    /// predict before setImage / setEmbeddings, or embeddings of the wrong shape.
    case invalidState(String)
    /// Embeddings whose record (`EmbeddingsProvenance`) does not match this image and model, or that have none.
    case embeddingsMismatch(String)
    /// A stage ("image_encoder", "mask_decoder") produced NaN or infinite values.
    case nonFinite(stage: String, String)

    /// The message for a person: what went wrong and, where it can, what to do.
    public var description: String {
        switch self {
        case .model(let error): "\(error)"
        case .image(let error): "\(error)"
        case .run(let error): "\(error)"
        case .invalidPrompt(let message): "prompt: \(message)"
        case .invalidState(let message): message
        case .embeddingsMismatch(let message): message
        case .nonFinite(let stage, let message): "\(stage) produced NaN or infinite values: \(message)"
        }
    }
}
