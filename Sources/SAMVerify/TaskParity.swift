/// One of the decoder's masks at full size, native against reference.
public struct MaskAgreement: Codable, Sendable, Equatable {
    /// Index among the decoder's four masks.
    public var index: Int
    /// Held to the thresholds (one of the masks `TaskThresholds.masks` selects).
    public var selected: Bool
    /// Intersection over union of the thresholded full-size masks (1 when both are empty).
    public var iou: Double
    public var nativeArea: Int
    public var referenceArea: Int
    /// |native area - reference area| / max(reference area, 1).
    public var areaDifference: Double
    /// The decoder's IoU predictions for this mask.
    public var nativeScore: Double
    public var referenceScore: Double
}

/// The task-level figures of one prompt: what a user of the masks would see change.
public struct PromptParity: Codable, Sendable, Equatable {
    /// The decoder case the prompt comes from.
    public var name: String
    public var masks: [MaskAgreement]
    /// Indices of the selected masks.
    public var selected: [Int]
    /// The selected mask with the highest IoU prediction, in each run.
    public var nativeBest: Int
    public var referenceBest: Int
    public var bestAgrees: Bool
    /// The reference's top IoU prediction among the selected masks minus the runner-up's: how close the
    /// choice was (nil with one selected mask).
    public var referenceMargin: Double?
    /// Over the selected masks.
    public var minMaskIoU: Double
    public var maxIoUPredictionError: Double
    public var maxAreaDifference: Double
    /// Each threshold this prompt misses, in words.
    public var failures: [String]
}

/// A case's task-level check: IoU of the thresholded full-size masks, best-mask agreement,
/// predicted-IoU error and mask-area difference, each held to `TaskThresholds`.
///
/// A decoder case has one prompt (its official path, on the reference embeddings, against PyTorch's
/// outputs). The image encoder case has one per decoder case of the set: the native decoder on the
/// native embeddings against the same decoder on PyTorch's embeddings, so an encoder error that moves
/// the masks shows here, and a decoder error does not (the decoder cases check that).
public struct TaskParity: Codable, Sendable, Equatable {
    /// pass, fail, not_applicable (nothing to compare: the tensors could not be run or compared), or
    /// bad_input (the set's frame is unusable).
    public var status: CheckStatus
    /// What was compared ("official decoder path", "end to end: ...").
    public var run: String
    public var problem: String?
    public var thresholds: TaskThresholds
    public var frame: MaskFrame?
    public var prompts: [PromptParity]
    /// Aggregates over the prompts (nil when none was compared).
    public var minMaskIoU: Double?
    public var bestMaskAgreements: Int
    public var bestMaskDisagreements: Int
    public var maxIoUPredictionError: Double?
    public var maxAreaDifference: Double?
    public var smallestReferenceMargin: Double?
    /// "<prompt>: <failure>" for every threshold missed.
    public var failures: [String]

    /// The figures of `prompts` held to `thresholds`.
    init(run: String, thresholds: TaskThresholds, frame: MaskFrame, prompts: [PromptParity]) {
        self.run = run
        self.thresholds = thresholds
        self.frame = frame
        self.prompts = prompts
        minMaskIoU = prompts.map(\.minMaskIoU).min()
        bestMaskAgreements = prompts.filter(\.bestAgrees).count
        bestMaskDisagreements = prompts.count - bestMaskAgreements
        maxIoUPredictionError = prompts.map(\.maxIoUPredictionError).max()
        maxAreaDifference = prompts.map(\.maxAreaDifference).max()
        smallestReferenceMargin = prompts.compactMap(\.referenceMargin).min()
        failures = prompts.flatMap { prompt in prompt.failures.map { "\(prompt.name): \($0)" } }
        status = prompts.isEmpty ? .notApplicable : failures.isEmpty ? .pass : .fail
        if prompts.isEmpty { problem = "no prompt could be compared" }
    }

    /// A check that could not compare anything.
    init(run: String, thresholds: TaskThresholds, status: CheckStatus, problem: String) {
        self.status = status
        self.run = run
        self.problem = problem
        self.thresholds = thresholds
        prompts = []
        bestMaskAgreements = 0
        bestMaskDisagreements = 0
        failures = []
    }

    /// "min IoU 0.99987, best 8/8" or the problem.
    public var summary: String {
        guard let minMaskIoU else { return problem ?? status.rawValue }
        return "min mask IoU \(formatIoU(minMaskIoU)), best mask agrees \(bestMaskAgreements)/\(prompts.count)"
            + (maxIoUPredictionError.map { ", IoU prediction error \(formatFigure($0))" } ?? "")
            + (maxAreaDifference.map { ", area difference \(formatFigure($0))" } ?? "")
    }
}

/// An IoU near 1 with the digits that matter ("0.999871", "1").
func formatIoU(_ value: Double) -> String {
    if value == 1 { return "1" }
    if value.isNaN { return "nan" }
    return String(format: "%.7f", value)
}
