import SAMModel
import SAMTensor

/// The image encoder case: `input_image.npy` to `image_embeddings`, then, at the task level, the set's
/// prompts decoded on the native embeddings.
extension CaseRunner {
    func runEncoder(_ referenceCase: ReferenceCase, into result: inout CaseResult) {
        let inputFile = referenceCase.file("input_image")
        result.inputs = [inputFile]
        let outputs = encoderOutputs
        guard sam.imageEncoder != nil else {
            result.note = "the model has no image_encoder"
            result.outputs = outputs.map { check(referenceCase, $0, "image_encoder", status: .notApplicable, problem: result.note) }
            return
        }
        let image: FloatTensor
        let side = sam.config.imageEncoder.imageSize
        switch loadInput(inputFile).flatMap({ tensor in
            Self.shape(tensor, of: inputFile, is: [1, 3, side, side]).map { tensor }
        }) {
        case .failure(let problem):
            result.outputs = outputs.map { check(referenceCase, $0, "image_encoder", status: .badInput, problem: problem.message) }
            return
        case .success(let tensor): image = tensor
        }
        let started = ContinuousClock.now
        let features: Result<ImageFeatures, RunError>
        do { features = .success(try sam.encodeFeatures(image)) } catch { features = .failure(RunError(error)) }
        let elapsed = seconds(since: started)
        result.outputs = outputs.enumerated().map { index, output in
            compare(features.map { $0.maps[index] }, referenceCase, output, path: "image_encoder", seconds: elapsed)
        }
        if case .success(let native) = features, result.outputs.allSatisfy({ $0.figures != nil }) {
            result.task = endToEndTask(features: native)
        } else {
            result.task = TaskParity(run: Self.endToEndRun, thresholds: references.taskThresholds, status: .notApplicable,
                                     problem: "the image embeddings could not be compared")
        }
    }

    static let endToEndRun = "end to end: every decoder case's official prompt through the native decoder on the native "
        + "image embeddings, against the same decoder on PyTorch's embeddings (what the encoder's error changes in the masks)"

    /// Every decoder case's official prompt decoded twice by the native decoder, on `features` (the native
    /// encoder's) and on the reference features, compared at the task level: the masks a user of this
    /// encoder would see change, with the decoder's own error left out (the decoder cases check that).
    /// Cases that cannot run are left out, and said so.
    func endToEndTask(features: ImageFeatures) -> TaskParity {
        let thresholds = references.taskThresholds
        guard sam.promptEncoder != nil, sam.maskDecoder != nil else {
            return TaskParity(run: Self.endToEndRun, thresholds: thresholds, status: .notApplicable,
                              problem: "the model has no prompt_encoder and mask_decoder")
        }
        let frame: MaskFrame, referenceFeatures: ImageFeatures
        switch (self.frame, imageFeatures) {
        case (.failure(let problem), _):
            return TaskParity(run: Self.endToEndRun, thresholds: thresholds, status: .badInput, problem: problem.message)
        case (_, .failure(let problem)):
            return TaskParity(run: Self.endToEndRun, thresholds: thresholds, status: .badInput, problem: problem.message)
        case (.success(let value), .success(let reference)): (frame, referenceFeatures) = (value, reference)
        }
        var prompts: [PromptParity] = []
        var skipped: [String] = []
        for decoderCase in references.cases where decoderCase.kind == .decoder && decoderCase.problem == nil
            && decoderCase.has("onnx_point_coords") {
            guard case .success(let inputs) = officialInputs(decoderCase),
                  let native = try? runOfficialModel(inputs, features: features),
                  let reference = try? runOfficialModel(inputs, features: referenceFeatures),
                  let outcome = try? TaskComparison.compare(
                    name: decoderCase.name, native: .init(masks: native.masks, iou: native.iou),
                    reference: .init(masks: reference.masks, iou: reference.iou), frame: frame,
                    maskThreshold: references.maskThreshold, thresholds: thresholds, tokenCount: inputs.tokenCount) else {
                skipped.append(decoderCase.name)
                continue
            }
            prompts.append(outcome.parity)
        }
        var task = TaskParity(run: Self.endToEndRun, thresholds: thresholds, frame: frame, prompts: prompts)
        if !skipped.isEmpty {
            task.problem = "\(skipped.count) case\(skipped.count == 1 ? "" : "s") left out (inputs unusable, or not applicable "
                + "to this model): " + skipped.prefix(5).joined(separator: ", ") + (skipped.count > 5 ? ", ..." : "")
        }
        return task
    }
}
