import Foundation
import SAMImage
import SAMKernels
import SAMModel
import SAMModelFile
import SAMParallel
import SAMTensor

/// A loaded model that serves any number of requests at once: it holds no per-image state, so one
/// `Segmenter` is shared by every task of an app. Encode an image once (`encode`), then ask for
/// masks on the `EncodedImage` from as many tasks as you like:
///
///     let segmenter = try Segmenter(contentsOf: modelURL)
///     let image = try await segmenter.encode(photo)          // cancellable
///     let prediction = try segmenter.predict(Prompt(points: [.init(x: 60, y: 40, .foreground)]), on: image)
///     let mask = prediction.bestMask
///
/// `SegmentAnything` is the same model with one current image, as upstream's predictors hold it.
public struct Segmenter: Sendable {
    /// The loaded `.samw`: the model and its metadata.
    public let model: LoadedModel
    /// The model family's image and prompt transform (SAM: longest side; SAM 2: square).
    public let transform: InputTransform
    /// `ModelFileMetadata.identity` of this model.
    public let modelIdentity: String
    /// Switches of the model family's predictor for every prediction (SAM-HQ's `hq_token_only`);
    /// a flag the model's decoder does not take (`PromptMaskDecoder.predictorFlags`) makes predict throw.
    public var predictorOptions = PredictorOptions()

    /// A segmenter over a model already loaded (`ModelFile.load`).
    public init(model: LoadedModel) {
        self.model = model
        modelIdentity = model.metadata.identity
        transform = model.metadata.config.imageEncoder.inputTransform
    }

    /// Loads the `.samw` model at `modelPath`; `verifyingChecksums: false` skips the CRC-32 check of
    /// its weights (`ModelFile.load`).
    public init(modelPath: String, verifyingChecksums: Bool = true) throws(PipelineError) {
        do { self.init(model: try ModelFile.load(modelPath, verifyingChecksums: verifyingChecksums)) } catch { throw .model(error) }
    }

    /// Loads the `.samw` model at a file URL.
    public init(contentsOf url: URL, verifyingChecksums: Bool = true) throws(PipelineError) {
        guard url.isFileURL else { throw .invalidState("\(url) is not a file URL: a model is read from a local file") }
        try self.init(modelPath: url.path, verifyingChecksums: verifyingChecksums)
    }

    /// Why `predictorOptions` cannot be used with this model (a switch its decoder does not take), or nil.
    public var predictorOptionsProblem: String? {
        guard let decoder = model.sam.maskDecoder else { return nil }
        let unknown = predictorOptions.unknownFlags(for: decoder)
        guard !unknown.isEmpty else { return nil }
        let taken = decoder.predictorFlags.keys.sorted()
        return "this \(model.metadata.modelFamily) model's predictor takes no option \(unknown.joined(separator: ", ")) "
            + "(it takes: \(taken.isEmpty ? "none" : taken.joined(separator: ", ")))"
    }

    /// The feature maps' names, in `ImageFeatures.maps` order (the names `EncodedImage.provenance` keys).
    public var featureNames: [String] { model.metadata.config.featureNames }

    // MARK: - Images

    /// Resizes, normalises and pads `image` and runs the image encoder, on the calling task. Honours
    /// cancellation: a cancelled task's encode stops part-way (the loops not yet started are skipped)
    /// and throws `CancellationError`.
    /// ref: mobile_sam/predictor.py SamPredictor.set_image; sam2/sam2_image_predictor.py SAM2ImagePredictor.set_image
    public func encode(_ image: RGBImage) async throws -> EncodedImage {
        try Task.checkCancellation()
        let signal = StopSignal()
        return try await withTaskCancellationHandler {
            let encoded = try encodeSynchronously(image, stoppedBy: signal)
            try Task.checkCancellation()
            return encoded
        } onCancel: {
            signal.raise()
        }
    }

    /// `encode` on the calling thread, without cancellation.
    public func encodeSynchronously(_ image: RGBImage) throws(PipelineError) -> EncodedImage {
        try encodeSynchronously(image, stoppedBy: nil)
    }

    /// The encode; with a `signal`, raising it stops the encoder part-way (its loops hand out finer
    /// ranges, `Workers.stoppable`), and what comes back is to be discarded.
    func encodeSynchronously(_ image: RGBImage, stoppedBy signal: StopSignal?) throws(PipelineError) -> EncodedImage {
        let clock = ContinuousClock()
        let started = clock.now
        let prepared: (input: FloatTensor, inputSize: ImageSize)
        do { prepared = try transform.prepare(image) } catch { throw .image(error) }
        let encoding = clock.now
        let encoded: ImageFeatures
        do {
            if let signal {
                encoded = try Workers.stoppable(by: signal) { () throws(SamError) in try model.sam.encodeFeatures(prepared.input) }
            } else {
                encoded = try model.sam.encodeFeatures(prepared.input)
            }
        } catch {
            throw .run(error)
        }
        // A stopped encoder's maps are unfinished: the caller throws CancellationError, never uses them.
        if signal?.isRaised == true { return EncodedImage(features: encoded, originalSize: image.size, inputSize: prepared.inputSize,
                                                 stageTimings: StageTimings(), decoderState: nil, record: nil) }
        for map in encoded.maps { try Self.requireFinite(map, stage: "image_encoder") }
        let state = try decoderState(for: encoded)
        let timings = StageTimings(preprocessing: encoding - started, imageEncoding: clock.now - encoding)
        return EncodedImage(features: encoded, originalSize: image.size, inputSize: prepared.inputSize, stageTimings: timings,
                            decoderState: state, record: provenance(forOriginalSize: image.size))
    }

    /// The record of features this model computes for an image of `originalSize`.
    public func provenance(forOriginalSize originalSize: ImageSize) -> EmbeddingsProvenance {
        EmbeddingsProvenance(originalSize: originalSize, inputSize: transform.inputSize(for: originalSize), modelIdentity: modelIdentity,
                             linearPrecision: Kernels.linearPrecision == .bfloat16 ? Kernels.LinearPrecision.bfloat16.rawValue : nil)
    }

    /// Features computed earlier (encode once, decode many) for the image of `originalSize`, checked
    /// as `SegmentAnything.setFeatures` checks them: features of another image size or model, maps
    /// other than those `provenance`'s digests bind, or features with no record, are refused unless
    /// `allowMismatch`.
    public func image(reusing features: ImageFeatures, originalSize: ImageSize, provenance: EmbeddingsProvenance?,
                      allowMismatch: Bool = false) throws(PipelineError) -> EncodedImage {
        let record = self.provenance(forOriginalSize: originalSize)
        let config = model.metadata.config
        let names = config.featureNames, shapes = config.featureShapes
        guard features.maps.count == names.count else {
            throw .invalidState("\(features.maps.count) image feature map(s) given, this model's are \(names.joined(separator: ", "))")
        }
        if !allowMismatch {
            guard let provenance else {
                throw .embeddingsMismatch("the embeddings carry no record of the image and model they were computed from")
            }
            let differences = provenance.differences(from: record) + provenance.featureDifferences(features, names: names)
            guard differences.isEmpty else {
                throw .embeddingsMismatch("the embeddings do not belong to this image and model: " + differences.joined(separator: "; "))
            }
        }
        for (map, (name, shape)) in zip(features.maps, zip(names, shapes)) {
            guard map.shape == shape else {
                throw .invalidState("\(name) has shape \(Shape.text(map.shape)), this model's is \(Shape.text(shape))")
            }
            guard map.data.allSatisfy(\.isFinite) else { throw .invalidState("\(name) contains NaN or infinite values") }
        }
        // Forced: the record of what they were really computed from, if known.
        return EncodedImage(features: features, originalSize: originalSize, inputSize: transform.inputSize(for: originalSize),
                            stageTimings: StageTimings(), decoderState: try decoderState(for: features),
                            record: allowMismatch ? provenance : record)
    }

    /// The decoder's per-image state for `features` (nil for a model without a decoder).
    private func decoderState(for features: ImageFeatures) throws(PipelineError) -> DecoderImageState? {
        guard model.sam.promptEncoder != nil, model.sam.maskDecoder != nil else { return nil }
        do { return try model.sam.decoderImageState(features: features) } catch { throw .run(error) }
    }

    // MARK: - Prompts

    /// Masks for `prompt` on `image`, at the image's size.
    /// ref: mobile_sam/predictor.py SamPredictor.predict / predict_torch; sam2_image_predictor.py predict / _predict
    public func predict(_ prompt: Prompt, on image: EncodedImage, selection: MaskSelection = .multimask) throws(PipelineError) -> Prediction {
        guard model.sam.maskDecoder != nil else { throw .run(.missingComponent("mask_decoder")) }
        let clock = ContinuousClock()
        let started = clock.now
        let (prediction, tokenCount) = try decode(prompt, on: image)
        let decoded = clock.now
        let (selected, returned) = try selecting(selection, from: prediction, tokenCount: tokenCount)
        let iou = prediction.iou
        // The masks come from the logits as decoded; the returned logits are clamped where the family's predictor clamps them.
        let binary: BinaryMasks
        do {
            binary = try transform.masks(Self.gather(prediction.masks, selected), inputSize: image.inputSize,
                                         originalSize: image.originalSize)
        } catch {
            throw .image(error)
        }
        let best = selected.max { iou.data[$0] < iou.data[$1] } ?? 0
        return Prediction(lowResLogits: returned, iouPredictions: iou.data, selected: selected, masks: binary, best: best,
                          objectScoreLogit: prediction.objectScoreLogits?.data.first,
                          stageTimings: StageTimings(decoding: decoded - started, postprocessing: clock.now - decoded))
    }

    /// `predict`'s decoding without its postprocessing: `prompt` checked and mapped as `predict` does,
    /// decoded on `image`. Upscale the masks kept with `transform` (`InputTransform.masksWithStability`).
    /// ref: mobile_sam/predictor.py SamPredictor.predict_torch (return_logits); sam2_image_predictor.py _predict
    public func predictLowResolution(_ prompt: Prompt, on image: EncodedImage,
                                     selection: MaskSelection = .multimask) throws(PipelineError) -> LowResolutionPrediction {
        let (prediction, tokenCount) = try decode(prompt, on: image)
        let (selected, returned) = try selecting(selection, from: prediction, tokenCount: tokenCount)
        return LowResolutionPrediction(logits: prediction.masks, iouPredictions: prediction.iou.data, selected: selected,
                                       returnedLogits: returned)
    }

    /// `predictLowResolution` for a batch of prompts on `image`, spread over the workers one prompt
    /// per core, each decoded on its core alone: the same outputs, bit for bit, as one call per
    /// prompt, in the prompts' order; the first failing prompt's error (by position) is thrown.
    /// ref: automatic_mask_generator.py _process_batch — predictor.predict_torch on points_per_batch prompts
    public func predictLowResolution(_ prompts: [Prompt], on image: EncodedImage,
                                     selection: MaskSelection = .multimask) throws(PipelineError) -> [LowResolutionPrediction] {
        var results = [Result<LowResolutionPrediction, PipelineError>?](repeating: nil, count: prompts.count)
        results.withUnsafeMutableBufferPointer { slots in
            Kernels.parallelForSerialItems(prompts.count) { index in
                slots[index] = Result { () throws(PipelineError) in try predictLowResolution(prompts[index], on: image, selection: selection) }
            }
        }
        return try results.map { (result) throws(PipelineError) in
            guard let result else { throw .invalidState("a prompt of the batch was not decoded") }
            return try result.get()
        }
    }

    /// The masks `selection` picks from a decoded prediction, and all its logits as the family's
    /// predictor returns them (SAM 2 clamps them to ±32; SAM returns them as decoded).
    private func selecting(_ selection: MaskSelection, from prediction: MaskPrediction,
                           tokenCount: Int) throws(PipelineError) -> (selected: [Int], returned: FloatTensor) {
        guard let decoder = model.sam.maskDecoder else { throw .run(.missingComponent("mask_decoder")) }
        let selected = switch selection {
        case .all: Array(0..<prediction.iou.count)
        case .multimask, .single: decoder.predictorSelection(prediction, multimask: selection == .multimask, tokenCount: tokenCount)
        }
        let all = Array(0..<prediction.iou.count)
        let returned = decoder.lowResolutionClamp.map { prediction.selecting(all, clampedTo: $0).masks } ?? prediction.masks
        return (selected, returned)
    }

    /// `prompt` checked, mapped and decoded on `image`: every mask's logits as the family's predictor
    /// makes them (`PromptMaskDecoder.predictorMasks` with `predictorOptions`) and scores, finite,
    /// and the token count the single-mask rule needs.
    func decode(_ prompt: Prompt, on image: EncodedImage) throws(PipelineError) -> (MaskPrediction, tokenCount: Int) {
        guard let decoder = model.sam.maskDecoder else { throw .run(.missingComponent("mask_decoder")) }
        if let problem = predictorOptionsProblem { throw .invalidState(problem) }
        let inputs = try PromptInputs(prompt, originalSize: image.originalSize, transform: transform, layout: model.sam.promptLayout,
                                      config: model.metadata.config)
        var prediction: MaskPrediction
        do {
            prediction = try model.sam.decode(imageState: image.decoderState ?? DecoderImageState(features: image.features),
                                              points: inputs.points, labels: inputs.labels,
                                              appendPaddingPoint: inputs.appendPaddingPoint, maskInput: inputs.maskInput,
                                              hasMaskInput: inputs.maskInput == nil ? 0 : 1)
        } catch {
            throw .run(error)
        }
        prediction = decoder.predictorMasks(prediction, options: predictorOptions)
        try Self.requireFinite(prediction.masks, stage: "mask_decoder (mask logits)")
        try Self.requireFinite(prediction.iou, stage: "mask_decoder (IoU predictions)")
        return (prediction, inputs.tokenCount)
    }

    // MARK: - Shared steps

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
