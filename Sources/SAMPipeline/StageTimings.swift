/// How long each stage of a request took, on the continuous clock. `EncodedImage.stageTimings` holds
/// an image's stages (preprocessing, the image encoder), `Prediction.stageTimings` a prompt's
/// (decoding, postprocessing). A stage that did not run for the value is nil: features reused from
/// earlier (`Segmenter.image(reusing:originalSize:provenance:allowMismatch:)`) were neither
/// preprocessed nor encoded.
public struct StageTimings: Sendable, Equatable, Hashable {
    /// Resizing, normalising and padding the image (upstream's `set_image` before its encoder).
    public var preprocessing: Duration?
    /// The image encoder, with the checks of its output and the decoder's per-image work.
    public var imageEncoding: Duration?
    /// The prompt encoder and the mask decoder.
    public var decoding: Duration?
    /// Bringing the selected masks to the image's size and thresholding them.
    public var postprocessing: Duration?

    /// Timings of the stages given; the others did not run.
    public init(preprocessing: Duration? = nil, imageEncoding: Duration? = nil, decoding: Duration? = nil,
                postprocessing: Duration? = nil) {
        self.preprocessing = preprocessing
        self.imageEncoding = imageEncoding
        self.decoding = decoding
        self.postprocessing = postprocessing
    }

    /// The stages that ran, in seconds, under the names samrun's `result.json` gives them:
    /// "preprocess", "image_encoder", "prompt_encoder+mask_decoder", "postprocess". Empty when none ran.
    public var secondsByStage: [String: Double] {
        let stages: [(String, Duration?)] = [("preprocess", preprocessing), ("image_encoder", imageEncoding),
                                             ("prompt_encoder+mask_decoder", decoding), ("postprocess", postprocessing)]
        var seconds: [String: Double] = [:]
        for case let (name, duration?) in stages { seconds[name] = Self.seconds(duration) }
        return seconds
    }

    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}
