import SAMImage
import SAMModel
import SAMModelFile

/// Why a segmentation request was refused; the message says what to fix.
public enum PipelineError: Error, CustomStringConvertible {
    case model(ModelFileError)
    case image(ImageError)
    case run(SamError)
    /// A prompt outside the image, a malformed box, a point count the model does not accept ...
    case invalidPrompt(String)
    /// predict before setImage / setEmbeddings, or embeddings of the wrong shape.
    case invalidState(String)
    /// Embeddings whose record (`EmbeddingsProvenance`) does not match this image and model, or that have none.
    case embeddingsMismatch(String)
    /// A stage ("image_encoder", "mask_decoder") produced NaN or infinite values.
    case nonFinite(stage: String, String)

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
