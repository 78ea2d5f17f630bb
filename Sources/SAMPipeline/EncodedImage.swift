import SAMImage
import SAMModel
import SAMTensor

/// One image as the model sees it after the encoder: its features, its sizes, the decoder's
/// prompt-independent work on them, and what they were computed from. A value: any number of tasks
/// may predict on it at once (`Segmenter.predict(_:on:)`), and it outlives nothing but itself.
public struct EncodedImage: Sendable {
    /// The decoder's image features (the embedding [1, C, g, g]; SAM 2 adds its high-resolution maps).
    public let features: ImageFeatures
    /// The image's size as given.
    public let originalSize: ImageSize
    /// The resized image's size inside the model's padded square (upstream's `input_size`).
    public let inputSize: ImageSize
    /// How long preprocessing and the image encoder took; neither is set for features reused from
    /// earlier (`Segmenter.image(reusing:originalSize:provenance:allowMismatch:)`).
    public let stageTimings: StageTimings
    /// The decoder's work that depends on the image alone, done once here (nil without a decoder).
    let decoderState: DecoderImageState?
    /// What the features were computed from, without the feature digests (`provenance` adds them).
    let record: EmbeddingsProvenance?

    /// Seconds spent per stage ("preprocess", "image_encoder"); empty for features reused from earlier.
    @available(*, deprecated, message: "use stageTimings (StageTimings.preprocessing, .imageEncoding); stageTimings.secondsByStage is this dictionary")
    public var timings: [String: Double] { stageTimings.secondsByStage }

    /// The image embedding [1, C, g, g] (the features' first map).
    public var embeddings: FloatTensor { features.embedding }

    /// What the features were computed from, with the SHA-256 of each feature map: the record
    /// `Segmenter.image(reusing:…)` and samrun's sidecar check. Hashes the maps on every call (4 MB
    /// for SAM, 16 MB for SAM 2): keep the result. nil when the features were forced in without one.
    public func provenance(featureNames: [String]) -> EmbeddingsProvenance? {
        guard let record else { return nil }
        return record.featureDigests == nil ? record.binding(features, names: featureNames) : record
    }
}
