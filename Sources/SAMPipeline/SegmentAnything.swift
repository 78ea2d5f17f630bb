import Foundation
import SAMImage
import SAMModel
import SAMModelFile
import SAMTensor

/// Segment Anything as upstream's `SamPredictor` (and SAM 2's `SAM2ImagePredictor`) runs it: load a
/// model, set an image once (the encoder runs), then predict masks for any number of prompts. It
/// holds one current image, so it is for one task at a time; `Segmenter` is the same model without
/// a current image, shared by any number of tasks (`EncodedImage` values instead).
public final class SegmentAnything {
    /// The model and its transforms, with no image of its own.
    public private(set) var segmenter: Segmenter
    /// Switches of the model family's predictor for every prediction (`Segmenter.predictorOptions`).
    public var predictorOptions: PredictorOptions {
        get { segmenter.predictorOptions }
        set { segmenter.predictorOptions = newValue }
    }
    /// The loaded `.samw`: the model and its metadata.
    public var model: LoadedModel { segmenter.model }
    /// The model family's image and prompt transform (SAM: longest side; SAM 2: square).
    public var transform: InputTransform { segmenter.transform }
    /// `ModelFileMetadata.identity` of this model.
    public var modelIdentity: String { segmenter.modelIdentity }

    /// The current image, encoded (nil before setImage / setEmbeddings / setFeatures).
    public private(set) var current: EncodedImage? {
        didSet { boundRecord = nil }
    }
    /// The current image's features (nil before setImage / setEmbeddings / setFeatures).
    public var features: ImageFeatures? { current?.features }
    /// The image embedding [1, C, g, g] (the features' first map).
    public var embeddings: FloatTensor? { current?.features.embedding }
    /// The current image's size as given.
    public var originalSize: ImageSize? { current?.originalSize }
    /// The resized image's size inside the padded square (upstream's `input_size`).
    public var inputSize: ImageSize? { current?.inputSize }
    /// Seconds the last setImage spent per stage ("preprocess", "image_encoder").
    @available(*, deprecated, message: "use current?.stageTimings (StageTimings.preprocessing, .imageEncoding)")
    public var imageTimings: [String: Double] { current?.stageTimings.secondsByStage ?? [:] }
    /// What the current embeddings were computed from, with the digest of each feature map (nil
    /// before setImage / setEmbeddings). The digests are made on first use and kept: hashing the maps
    /// (4 MB for SAM, 16 MB for SAM 2) is paid only by a caller that keeps or writes the features.
    public var embeddingsProvenance: EmbeddingsProvenance? {
        if let boundRecord { return boundRecord }
        boundRecord = current?.provenance(featureNames: segmenter.featureNames)
        return boundRecord
    }
    private var boundRecord: EmbeddingsProvenance?

    /// Loads the model at `modelPath`; `verifyingChecksums: false` skips the CRC-32 check of its
    /// weights (`ModelFile.load`), which costs about 0.5 ms per MB on 2 cores.
    public convenience init(modelPath: String, verifyingChecksums: Bool = true) throws(PipelineError) {
        self.init(segmenter: try Segmenter(modelPath: modelPath, verifyingChecksums: verifyingChecksums))
    }

    /// A predictor over a model already loaded (`ModelFile.load`).
    public convenience init(model: LoadedModel) {
        self.init(segmenter: Segmenter(model: model))
    }

    /// A predictor over `segmenter`'s model, with no image yet.
    public init(segmenter: Segmenter) {
        self.segmenter = segmenter
    }

    /// Resizes, normalises and pads `image`, and runs the image encoder.
    /// ref: mobile_sam/predictor.py SamPredictor.set_image; sam2/sam2_image_predictor.py SAM2ImagePredictor.set_image
    public func setImage(_ image: RGBImage) throws(PipelineError) {
        current = try segmenter.encodeSynchronously(image)
    }

    /// The record of embeddings this model computes for an image of `originalSize`.
    public func provenance(forOriginalSize originalSize: ImageSize) -> EmbeddingsProvenance {
        segmenter.provenance(forOriginalSize: originalSize)
    }

    /// Reuses embeddings computed earlier (encode once, decode many) for the image of `originalSize`:
    /// `setFeatures` with the embedding alone, which is all SAM's and MobileSAM's decoders take.
    public func setEmbeddings(_ cached: FloatTensor, originalSize: ImageSize, provenance: EmbeddingsProvenance?,
                              allowMismatch: Bool = false) throws(PipelineError) {
        try setFeatures(ImageFeatures(embedding: cached), originalSize: originalSize, provenance: provenance,
                        allowMismatch: allowMismatch)
    }

    /// Reuses image features computed earlier for the image of `originalSize` (SAM 2: the embedding
    /// and both high-resolution maps, `config.featureNames`). `provenance` is what they
    /// were computed from (`embeddingsProvenance` after `setImage`, or samrun's sidecar): features of
    /// another image size or another model, maps other than those the record's digests bind, or
    /// features with no record, are refused unless `allowMismatch`, since the masks would be computed
    /// against the wrong image without a sign.
    public func setFeatures(_ cached: ImageFeatures, originalSize: ImageSize, provenance: EmbeddingsProvenance?,
                            allowMismatch: Bool = false) throws(PipelineError) {
        current = try segmenter.image(reusing: cached, originalSize: originalSize, provenance: provenance, allowMismatch: allowMismatch)
    }

    /// Masks for `prompt` on the current image.
    /// ref: mobile_sam/predictor.py SamPredictor.predict / predict_torch; sam2_image_predictor.py predict / _predict
    public func predict(_ prompt: Prompt, selection: MaskSelection = .multimask) throws(PipelineError) -> Prediction {
        try segmenter.predict(prompt, on: try currentImage(), selection: selection)
    }

    /// The current image, or the error a call before any image gets.
    func currentImage() throws(PipelineError) -> EncodedImage {
        guard let current else { throw .invalidState("no image: call setImage or setEmbeddings first") }
        return current
    }
}
