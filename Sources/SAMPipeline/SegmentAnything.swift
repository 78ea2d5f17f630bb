import Foundation
import SAMImage
import SAMModel
import SAMModelFile
import SAMTensor

/// Segment Anything for apps, as upstream's `SamPredictor`:
/// load a model, set an image once (the encoder runs), then predict masks for any number of prompts.
public final class SegmentAnything {
    public let model: LoadedModel
    /// How `setImage` turns a photo into the encoder input (the model configuration's pixel statistics).
    public let preprocessor: SamPreprocessor
    private let resize: ResizeLongestSide
    private let postprocessor: MaskPostprocessor

    /// The current image's embeddings and sizes (nil before setImage / setEmbeddings).
    public private(set) var embeddings: FloatTensor? {
        didSet { decoderState = nil }
    }
    /// The decoder's prompt-independent work on `embeddings`, made once per image.
    private var decoderState: MaskDecoderImageState?
    public private(set) var originalSize: ImageSize?
    /// The resized image's size inside the padded square (upstream's `input_size`).
    public private(set) var inputSize: ImageSize?
    /// Seconds the last setImage spent per stage ("preprocess", "image_encoder").
    public private(set) var imageTimings: [String: Double] = [:]
    /// What the current embeddings were computed from (nil before setImage / setEmbeddings).
    public private(set) var embeddingsProvenance: EmbeddingsProvenance?
    /// `ModelFileMetadata.identity` of this model.
    public let modelIdentity: String

    /// Loads the model at `modelPath`; `verifyingChecksums: false` skips the CRC-32 check of its
    /// weights (`ModelFile.load`), which costs about 0.5 ms per MB on 2 cores.
    public convenience init(modelPath: String, verifyingChecksums: Bool = true) throws(PipelineError) {
        do { self.init(model: try ModelFile.load(modelPath, verifyingChecksums: verifyingChecksums)) } catch { throw .model(error) }
    }

    public init(model: LoadedModel) {
        self.model = model
        modelIdentity = model.metadata.identity
        let encoder = model.metadata.config.imageEncoder, side = encoder.imageSize
        preprocessor = SamPreprocessor(encoder.preprocessing, imageSize: side)
        resize = ResizeLongestSide(targetLength: side)
        postprocessor = MaskPostprocessor(imageSize: side)
    }

    /// Resizes, normalises and pads `image`, and runs the image encoder.
    /// ref: mobile_sam/predictor.py SamPredictor.set_image / set_torch_image
    public func setImage(_ image: RGBImage) throws(PipelineError) {
        let started = Date()
        let prepared: (input: FloatTensor, inputSize: ImageSize)
        do { prepared = try preprocessor.prepare(image) } catch { throw .image(error) }
        let encoding = Date()
        let encoded: FloatTensor
        do { encoded = try model.sam.encodeImage(prepared.input) } catch { throw .run(error) }
        try Self.requireFinite(encoded, stage: "image_encoder")
        let state = try decoderState(for: encoded)
        embeddings = encoded
        decoderState = state
        originalSize = image.size
        inputSize = prepared.inputSize
        embeddingsProvenance = provenance(forOriginalSize: image.size)
        imageTimings = ["preprocess": encoding.timeIntervalSince(started), "image_encoder": Date().timeIntervalSince(encoding)]
    }

    /// The record of embeddings this model computes for an image of `originalSize`.
    public func provenance(forOriginalSize originalSize: ImageSize) -> EmbeddingsProvenance {
        EmbeddingsProvenance(originalSize: originalSize, inputSize: resize.targetSize(originalSize), modelIdentity: modelIdentity)
    }

    /// Reuses embeddings computed earlier (encode once, decode many) for the image of `originalSize`.
    /// `provenance` is what they were computed from (`embeddingsProvenance` after `setImage`, or
    /// samrun's `image_embeddings.json`): embeddings of another image size or another model, or with
    /// no record, are refused unless `allowMismatch`, since the masks would be computed against the
    /// wrong image without a sign.
    public func setEmbeddings(_ cached: FloatTensor, originalSize: ImageSize, provenance: EmbeddingsProvenance?,
                              allowMismatch: Bool = false) throws(PipelineError) {
        let record = self.provenance(forOriginalSize: originalSize)
        if !allowMismatch {
            guard let provenance else {
                throw .embeddingsMismatch("the embeddings carry no record of the image and model they were computed from")
            }
            let differences = provenance.differences(from: record)
            guard differences.isEmpty else {
                throw .embeddingsMismatch("the embeddings do not belong to this image and model: " + differences.joined(separator: "; "))
            }
        }
        let config = model.metadata.config.promptEncoder
        let expected = [1, config.embedDim, config.imageEmbeddingSize, config.imageEmbeddingSize]
        guard cached.shape == expected else {
            throw .invalidState("embeddings have shape \(Shape.text(cached.shape)), this model's are \(Shape.text(expected))")
        }
        guard cached.data.allSatisfy(\.isFinite) else { throw .invalidState("embeddings contain NaN or infinite values") }
        let state = try decoderState(for: cached)
        embeddings = cached
        decoderState = state
        self.originalSize = originalSize
        inputSize = resize.targetSize(originalSize)
        embeddingsProvenance = allowMismatch ? provenance : record  // forced: what they were really computed from, if known
        imageTimings = [:]
    }

    /// Masks for `prompt` on the current image.
    /// ref: mobile_sam/predictor.py SamPredictor.predict / predict_torch
    public func predict(_ prompt: Prompt, selection: MaskSelection = .multimask) throws(PipelineError) -> Prediction {
        guard let embeddings, let originalSize, let inputSize else {
            throw .invalidState("no image: call setImage or setEmbeddings first")
        }
        let inputs = try PromptInputs(prompt, originalSize: originalSize, resize: resize, config: model.metadata.config)
        let started = Date()
        let (masks, iou): (FloatTensor, FloatTensor)
        do {
            if let decoderState {
                (masks, iou) = try model.sam.decode(imageState: decoderState, points: inputs.points, labels: inputs.labels,
                                                    appendPaddingPoint: inputs.appendPaddingPoint, maskInput: inputs.maskInput,
                                                    hasMaskInput: inputs.maskInput == nil ? 0 : 1)
            } else {
                (masks, iou) = try model.sam.decode(imageEmbeddings: embeddings, points: inputs.points, labels: inputs.labels,
                                                    appendPaddingPoint: inputs.appendPaddingPoint, maskInput: inputs.maskInput,
                                                    hasMaskInput: inputs.maskInput == nil ? 0 : 1)
            }
        } catch {
            throw .run(error)
        }
        try Self.requireFinite(masks, stage: "mask_decoder (mask logits)")
        try Self.requireFinite(iou, stage: "mask_decoder (IoU predictions)")
        let decoded = Date()
        let selected = Self.select(selection, iou: iou.data, pointCount: inputs.tokenCount)
        let selectedLogits = Self.gather(masks, selected)
        let binary: BinaryMasks
        do { binary = try postprocessor.masks(selectedLogits, inputSize: inputSize, originalSize: originalSize) } catch { throw .image(error) }
        let best = selected.max { iou.data[$0] < iou.data[$1] } ?? 0
        return Prediction(lowResLogits: masks, iouPredictions: iou.data, selected: selected, masks: binary, best: best,
                          timings: ["prompt_encoder+mask_decoder": decoded.timeIntervalSince(started),
                                    "postprocess": Date().timeIntervalSince(decoded)])
    }

    /// The decoder's per-image state for `embeddings` (nil for a model without a decoder).
    private func decoderState(for embeddings: FloatTensor) throws(PipelineError) -> MaskDecoderImageState? {
        guard model.sam.promptEncoder != nil, model.sam.maskDecoder != nil else { return nil }
        do { return try model.sam.decoderImageState(imageEmbeddings: embeddings) } catch { throw .run(error) }
    }

    /// Throws `.nonFinite` naming `stage` when `tensor` holds NaN or infinity.
    static func requireFinite(_ tensor: FloatTensor, stage: String) throws(PipelineError) {
        var nan = 0, infinite = 0
        for value in tensor.data where !value.isFinite {
            if value.isNaN { nan += 1 } else { infinite += 1 }
        }
        guard nan + infinite == 0 else {
            throw .nonFinite(stage: stage, "\(nan) NaN and \(infinite) infinite of \(tensor.data.count) values \(Shape.text(tensor.shape))")
        }
    }

    /// ref: mask_decoder.py MaskDecoder.forward (mask_slice); utils/onnx.py SamOnnxModel.select_masks
    static func select(_ selection: MaskSelection, iou: [Float], pointCount: Int) -> [Int] {
        switch selection {
        case .multimask: return Array(1..<iou.count)
        case .all: return Array(0..<iou.count)
        case .single:
            // score_reweight = [1000] + [0] * (num_mask_tokens - 1); score = iou + (num_points - 2.5) * score_reweight
            let scores = iou.enumerated().map { $0.offset == 0 ? $0.element + (Float(pointCount) - 2.5) * 1000 : $0.element }
            return [scores.indices.max { scores[$0] < scores[$1] } ?? 0]
        }
    }

    /// Masks `indices` of [1, K, h, w] as [1, indices.count, h, w].
    static func gather(_ masks: FloatTensor, _ indices: [Int]) -> FloatTensor {
        let plane = masks.shape[2] * masks.shape[3]
        var data: [Float] = []
        data.reserveCapacity(indices.count * plane)
        for index in indices { data += masks.data[(index * plane)..<((index + 1) * plane)] }
        return FloatTensor(shape: [1, indices.count, masks.shape[2], masks.shape[3]], data: data)
    }
}
