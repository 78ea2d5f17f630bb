import SAMFormats
import SAMModel
import SAMTensor

/// The task-level check of a decoder case's official path: the masks a user would get, native against
/// reference, beside the tensor figures.
extension CaseRunner {
    static let officialRun = "official decoder path on the reference image embeddings"

    /// Compares the official path's native outputs with the references its checks read. Not applicable
    /// when the checks could not compare values (the model did not run, a shape differs, a reference is
    /// missing or bad): then the tensor checks already say why.
    func officialTask(_ referenceCase: ReferenceCase, checks: [OutputCheck], native: TaskComparison.DecoderOutputs?,
                      tokenCount: Int) -> TaskParity {
        let thresholds = references.taskThresholds
        guard let decoded = native, checks.allSatisfy({ $0.figures != nil }),
              let masks = comparedReferences["low_res_masks"], let iou = comparedReferences["iou_predictions"] else {
            let reason = checks.first { $0.figures == nil }?.problem ?? "the official outputs could not be compared"
            return TaskParity(run: Self.officialRun, thresholds: thresholds, status: .notApplicable, problem: reason)
        }
        let frame: MaskFrame
        switch self.frame {
        case .failure(let problem):
            return TaskParity(run: Self.officialRun, thresholds: thresholds, status: .badInput, problem: problem.message)
        case .success(let value): frame = value
        }
        // Masks as the family's predictor makes them from all tokens (SAM-HQ adds its HQ mask to each).
        func predictorView(_ outputs: TaskComparison.DecoderOutputs) -> TaskComparison.DecoderOutputs {
            guard let decoder = sam.maskDecoder else { return outputs }
            let view = decoder.predictorMasks(MaskPrediction(masks: outputs.masks, iou: outputs.iou), options: PredictorOptions())
            return TaskComparison.DecoderOutputs(masks: view.masks, iou: view.iou)
        }
        let reference = predictorView(TaskComparison.DecoderOutputs(masks: masks, iou: iou))
        let native = predictorView(decoded)
        guard native.masks.shape.count == 4, native.masks.shape[0] == 1, native.masks.shape[1] == native.iou.count else {
            return TaskParity(run: Self.officialRun, thresholds: thresholds, status: .notApplicable,
                              problem: "low_res_masks \(Shape.text(native.masks.shape)) do not pair with \(native.iou.count) IoU predictions")
        }
        do {
            let outcome = try TaskComparison.compare(name: referenceCase.name, native: native, reference: reference, frame: frame,
                                                     maskThreshold: references.maskThreshold, thresholds: thresholds,
                                                     tokenCount: tokenCount)
            if artifacts != nil {
                artifacts?.frame = frame
                artifacts?.nativeMasks = outcome.native
                artifacts?.referenceMasks = outcome.reference
            }
            return TaskParity(run: Self.officialRun, thresholds: thresholds, frame: frame, prompts: [outcome.parity])
        } catch {
            return TaskParity(run: Self.officialRun, thresholds: thresholds, status: .badInput,
                              problem: "the masks cannot be brought to the frame \(frame.originalSize): \(error)")
        }
    }
}
