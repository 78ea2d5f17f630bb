import Foundation
import SAMImage
import SAMKernels
import SAMModel
import SAMModelFile
import SAMTensor

/// Segment Anything for apps, as upstream's `SamPredictor` (and SAM 2's `SAM2ImagePredictor`):
/// load a model, set an image once (the encoder runs), then predict masks for any number of prompts.
public final class SegmentAnything {
    public let model: LoadedModel
    /// The model family's image and prompt transform (SAM: longest side; SAM 2: square).
    public let transform: InputTransform

    /// The current image's features and sizes (nil before setImage / setEmbeddings / setFeatures).
    public private(set) var features: ImageFeatures? {
        didSet { decoderState = nil }
    }
    /// The decoder's prompt-independent work on `features`, made once per image (`Sam.decoderImageState`).
    private var decoderState: DecoderImageState?
    /// The image embedding [1, C, g, g] (the features' first map).
    public var embeddings: FloatTensor? { features?.embedding }
    public private(set) var originalSize: ImageSize?
    /// The resized image's size inside the padded square (upstream's `input_size`).
    public private(set) var inputSize: ImageSize?
    /// Seconds the last setImage spent per stage ("preprocess", "image_encoder").
    public private(set) var imageTimings: [String: Double] = [:]
    /// What the current embeddings were computed from, with the digest of each feature map (nil
    /// before setImage / setEmbeddings). The digests are made on first use and kept: hashing the maps
    /// (4 MB for SAM, 16 MB for SAM 2) is paid only by a caller that keeps or writes the features.
    public var embeddingsProvenance: EmbeddingsProvenance? {
        if let boundRecord { return boundRecord }
        guard let imageRecord else { return nil }
        guard imageRecord.featureDigests == nil, let features else { return imageRecord }
        let bound = imageRecord.binding(features, names: model.metadata.config.imageEncoder.featureNames)
        boundRecord = bound
        return bound
    }
    /// The record of the current features as set, and the same with their digests once asked for.
    private var imageRecord: EmbeddingsProvenance? {
        didSet { boundRecord = nil }
    }
    private var boundRecord: EmbeddingsProvenance?
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
        transform = Self.transform(for: model.metadata.config.imageEncoder)
    }

    /// The predictor transform of an image-encoder configuration's family.
    public static func transform(for encoder: AnyImageEncoderConfig) -> InputTransform {
        let side = encoder.imageSize, preprocessing = encoder.preprocessing
        switch preprocessing.resize {
        case .longestSide:
            return .longestSide(SamPreprocessor(pixelMean: preprocessing.pixelMean.map(Float.init),
                                                pixelStd: preprocessing.pixelStd.map(Float.init), imageSize: side))
        case .square:
            return .square(SquarePreprocessor(side: side, pixelMean: preprocessing.pixelMean.map(Float.init),
                                              pixelStd: preprocessing.pixelStd.map(Float.init)))
        }
    }

    /// Resizes, normalises and pads `image`, and runs the image encoder.
    /// ref: mobile_sam/predictor.py SamPredictor.set_image; sam2/sam2_image_predictor.py SAM2ImagePredictor.set_image
    public func setImage(_ image: RGBImage) throws(PipelineError) {
        let started = Date()
        let prepared: (input: FloatTensor, inputSize: ImageSize)
        do { prepared = try transform.prepare(image) } catch { throw .image(error) }
        let encoding = Date()
        let encoded: ImageFeatures
        do { encoded = try model.sam.encodeFeatures(prepared.input) } catch { throw .run(error) }
        for map in encoded.maps { try Self.requireFinite(map, stage: "image_encoder") }
        let state = try decoderState(for: encoded)
        features = encoded
        decoderState = state
        originalSize = image.size
        inputSize = prepared.inputSize
        imageRecord = provenance(forOriginalSize: image.size)
        imageTimings = ["preprocess": encoding.timeIntervalSince(started), "image_encoder": Date().timeIntervalSince(encoding)]
    }

    /// The record of embeddings this model computes for an image of `originalSize`.
    public func provenance(forOriginalSize originalSize: ImageSize) -> EmbeddingsProvenance {
        EmbeddingsProvenance(originalSize: originalSize, inputSize: transform.inputSize(for: originalSize), modelIdentity: modelIdentity,
                             linearPrecision: Kernels.linearPrecision == .bfloat16 ? Kernels.LinearPrecision.bfloat16.rawValue : nil)
    }

    /// Reuses embeddings computed earlier (encode once, decode many) for the image of `originalSize`:
    /// `setFeatures` with the embedding alone, which is all SAM's and MobileSAM's decoders take.
    public func setEmbeddings(_ cached: FloatTensor, originalSize: ImageSize, provenance: EmbeddingsProvenance?,
                              allowMismatch: Bool = false) throws(PipelineError) {
        try setFeatures(ImageFeatures(embedding: cached), originalSize: originalSize, provenance: provenance,
                        allowMismatch: allowMismatch)
    }

    /// Reuses image features computed earlier for the image of `originalSize` (SAM 2: the embedding
    /// and both high-resolution maps, `config.imageEncoder.featureNames`). `provenance` is what they
    /// were computed from (`embeddingsProvenance` after `setImage`, or samrun's sidecar): features of
    /// another image size or another model, maps other than those the record's digests bind, or
    /// features with no record, are refused unless `allowMismatch`, since the masks would be computed
    /// against the wrong image without a sign.
    public func setFeatures(_ cached: ImageFeatures, originalSize: ImageSize, provenance: EmbeddingsProvenance?,
                            allowMismatch: Bool = false) throws(PipelineError) {
        let record = self.provenance(forOriginalSize: originalSize)
        let encoder = model.metadata.config.imageEncoder
        let names = encoder.featureNames, shapes = encoder.featureShapes
        guard cached.maps.count == names.count else {
            throw .invalidState("\(cached.maps.count) image feature map(s) given, this model's are \(names.joined(separator: ", "))")
        }
        if !allowMismatch {
            guard let provenance else {
                throw .embeddingsMismatch("the embeddings carry no record of the image and model they were computed from")
            }
            let differences = provenance.differences(from: record) + provenance.featureDifferences(cached, names: names)
            guard differences.isEmpty else {
                throw .embeddingsMismatch("the embeddings do not belong to this image and model: " + differences.joined(separator: "; "))
            }
        }
        for (map, (name, shape)) in zip(cached.maps, zip(names, shapes)) {
            guard map.shape == shape else {
                throw .invalidState("\(name) has shape \(Shape.text(map.shape)), this model's is \(Shape.text(shape))")
            }
            guard map.data.allSatisfy(\.isFinite) else { throw .invalidState("\(name) contains NaN or infinite values") }
        }
        let state = try decoderState(for: cached)
        features = cached
        decoderState = state
        self.originalSize = originalSize
        inputSize = transform.inputSize(for: originalSize)
        imageRecord = allowMismatch ? provenance : record  // forced: what they were really computed from, if known
        imageTimings = [:]
    }

    /// Masks for `prompt` on the current image.
    /// ref: mobile_sam/predictor.py SamPredictor.predict / predict_torch; sam2_image_predictor.py predict / _predict
    public func predict(_ prompt: Prompt, selection: MaskSelection = .multimask) throws(PipelineError) -> Prediction {
        guard let originalSize, let inputSize else {
            throw .invalidState("no image: call setImage or setEmbeddings first")
        }
        guard let decoder = model.sam.maskDecoder else { throw .run(.missingComponent("mask_decoder")) }
        let started = Date()
        let (prediction, tokenCount) = try decodeCurrentImage(prompt)
        let (masks, iou) = (prediction.masks, prediction.iou)
        let decoded = Date()
        let selected = Self.select(selection, iou: iou.data, pointCount: tokenCount) { decoder.singleMaskIndex(prediction, tokenCount: $0) }
        // The masks come from the logits as decoded; the returned logits are clamped where the family's predictor clamps them.
        let binary: BinaryMasks
        do {
            binary = try transform.masks(Self.gather(masks, selected), inputSize: inputSize, originalSize: originalSize)
        } catch {
            throw .image(error)
        }
        let best = selected.max { iou.data[$0] < iou.data[$1] } ?? 0
        let all = Array(0..<iou.count)
        let returned = decoder.lowResolutionClamp.map { prediction.selecting(all, clampedTo: $0).masks } ?? masks
        return Prediction(lowResLogits: returned, iouPredictions: iou.data, selected: selected, masks: binary, best: best,
                          objectScoreLogit: prediction.objectScoreLogits?.data.first,
                          timings: ["prompt_encoder+mask_decoder": decoded.timeIntervalSince(started),
                                    "postprocess": Date().timeIntervalSince(decoded)])
    }

    /// `prompt` checked, mapped and decoded on the current image: every mask's logits and scores,
    /// finite, and the token count the single-mask rule needs.
    func decodeCurrentImage(_ prompt: Prompt) throws(PipelineError) -> (MaskPrediction, tokenCount: Int) {
        guard let features, let originalSize else {
            throw .invalidState("no image: call setImage or setEmbeddings first")
        }
        let inputs = try PromptInputs(prompt, originalSize: originalSize, transform: transform, layout: model.sam.promptLayout,
                                      config: model.metadata.config)
        let prediction: MaskPrediction
        do {
            prediction = try model.sam.decode(imageState: decoderState ?? DecoderImageState(features: features),
                                              points: inputs.points, labels: inputs.labels,
                                              appendPaddingPoint: inputs.appendPaddingPoint, maskInput: inputs.maskInput,
                                              hasMaskInput: inputs.maskInput == nil ? 0 : 1)
        } catch {
            throw .run(error)
        }
        try Self.requireFinite(prediction.masks, stage: "mask_decoder (mask logits)")
        try Self.requireFinite(prediction.iou, stage: "mask_decoder (IoU predictions)")
        return (prediction, inputs.tokenCount)
    }

    /// The decoder's per-image state for `features` (nil for a model without a decoder).
    private func decoderState(for features: ImageFeatures) throws(PipelineError) -> DecoderImageState? {
        guard model.sam.promptEncoder != nil, model.sam.maskDecoder != nil else { return nil }
        do { return try model.sam.decoderImageState(features: features) } catch { throw .run(error) }
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

    /// ref: mask_decoder.py MaskDecoder.forward (mask_slice); utils/onnx.py SamOnnxModel.select_masks.
    /// `.single` asks `singleMask` (the decoder family's rule: SAM's official-export rule, SAM 2's
    /// stability fallback) with the token count; without one, SAM's rule.
    static func select(_ selection: MaskSelection, iou: [Float], pointCount: Int,
                       singleMask: ((Int) -> Int)? = nil) -> [Int] {
        switch selection {
        case .multimask: return Array(1..<iou.count)
        case .all: return Array(0..<iou.count)
        case .single:
            return [singleMask?(pointCount) ?? MaskDecoder.officialSingleMaskIndex(iou: iou, tokenCount: pointCount)]
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
