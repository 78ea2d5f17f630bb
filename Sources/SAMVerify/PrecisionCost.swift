/// What a lower-precision model costs at the task level (weights stored f16, int8 or q4, int8
/// products, or bfloat16 linear layers) against the float32 references: the figures
/// `samconvert --dtype int8|q4` is judged by. Counted apart for the image encoder case's prompts
/// (end to end: native encoder and decoder against the decoder on PyTorch's embeddings) and the
/// decoder cases' (the decoder alone, on PyTorch's embeddings), since a precision that leaves one
/// of them float32 passes its cases exactly.
public struct PrecisionCost: Codable, Sendable, Equatable {
    /// "int8 weights", "int8 weights in int8 products", "q4 weights", "f16 weights", "bfloat16 linear
    /// layers" (joined with "; ").
    public var precision: String
    public var maskIoUThreshold: Double
    public var endToEnd: PromptTally?
    public var decoder: PromptTally?

    public static let defaultMaskIoUThreshold = 0.98

    /// Task-level figures over some prompts.
    public struct PromptTally: Codable, Sendable, Equatable {
        public var prompts: Int
        /// Prompts whose every selected mask has IoU >= the threshold against the reference's.
        public var everyMaskAtThreshold: Int
        /// Prompts whose reference best mask (the one the predictor returns) has IoU >= the threshold.
        public var bestMaskAtThreshold: Int
        /// Prompts whose best mask (highest IoU prediction) is the reference's.
        public var bestMaskAgreements: Int
        public var minMaskIoU: Double?
        public var maxIoUPredictionError: Double?

        init?(_ prompts: [PromptParity], threshold: Double) {
            guard !prompts.isEmpty else { return nil }
            self.prompts = prompts.count
            everyMaskAtThreshold = prompts.filter { $0.minMaskIoU >= threshold }.count
            bestMaskAtThreshold = prompts.filter { prompt in
                (prompt.masks.first { $0.index == prompt.referenceBest }?.iou ?? 0) >= threshold
            }.count
            bestMaskAgreements = prompts.filter(\.bestAgrees).count
            minMaskIoU = prompts.map(\.minMaskIoU).min()
            maxIoUPredictionError = prompts.map(\.maxIoUPredictionError).max()
        }

        var summary: String {
            "\(everyMaskAtThreshold)/\(prompts) prompts with every mask, \(bestMaskAtThreshold)/\(prompts) with the best mask at "
                + "that IoU; best mask agrees \(bestMaskAgreements)/\(prompts)"
                + (minMaskIoU.map { ", min mask IoU \(formatIoU($0))" } ?? "")
                + (maxIoUPredictionError.map { ", IoU prediction error <= \(formatFigure($0))" } ?? "")
        }
    }

    /// Over the task-level prompts of `cases`; nil when nothing is lower precision or no prompt was compared.
    static func measure(weightDType: String?, linearPrecision: String?, int8Products: Bool, cases: [CaseResult]) -> PrecisionCost? {
        var parts: [String] = []
        if let weightDType, weightDType != "f32" { parts.append("\(weightDType) weights" + (int8Products ? " in int8 products" : "")) }
        if let linearPrecision { parts.append("\(linearPrecision) linear layers") }
        let threshold = defaultMaskIoUThreshold
        let endToEnd = PromptTally(cases.filter { $0.kind == .imageEncoder }.compactMap(\.task).flatMap(\.prompts), threshold: threshold)
        let decoder = PromptTally(cases.filter { $0.kind != .imageEncoder }.compactMap(\.task).flatMap(\.prompts), threshold: threshold)
        guard !parts.isEmpty, endToEnd != nil || decoder != nil else { return nil }
        return PrecisionCost(precision: parts.joined(separator: "; "), maskIoUThreshold: threshold, endToEnd: endToEnd, decoder: decoder)
    }

    /// The lines the table report prints.
    public var lines: [String] {
        ["precision cost against the float32 references (\(precision); mask IoU >= \(maskIoUThreshold)):"]
            + [endToEnd.map { "  end to end: " + $0.summary }, decoder.map { "  decoder cases: " + $0.summary }].compactMap { $0 }
    }
}
