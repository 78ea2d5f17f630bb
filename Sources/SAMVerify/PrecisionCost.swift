/// What a lower-precision model costs at the task level (weights stored f16, int8 or q4, or
/// bfloat16 linear layers), over every prompt the run compared with the float32 references:
/// the figures `samconvert --dtype int8|q4` is judged by.
public struct PrecisionCost: Codable, Sendable, Equatable {
    /// "int8 weights", "int8 weights in int8 products", "q4 weights", "f16 weights", "bfloat16 linear
    /// layers" (joined with "; ").
    public var precision: String
    public var prompts: Int
    /// Prompts whose every selected mask has IoU >= `maskIoUThreshold` against the reference's.
    public var promptsAtMaskIoU: Int
    public var maskIoUThreshold: Double
    /// Prompts whose best mask (highest IoU prediction) is the reference's.
    public var bestMaskAgreements: Int
    public var minMaskIoU: Double?
    public var maxIoUPredictionError: Double?

    public static let defaultMaskIoUThreshold = 0.98

    /// Over the task-level prompts of `cases`; nil when nothing is lower precision or no prompt was compared.
    static func measure(weightDType: String?, linearPrecision: String?, int8Products: Bool, cases: [CaseResult]) -> PrecisionCost? {
        var parts: [String] = []
        if let weightDType, weightDType != "f32" { parts.append("\(weightDType) weights" + (int8Products ? " in int8 products" : "")) }
        if let linearPrecision { parts.append("\(linearPrecision) linear layers") }
        let prompts = cases.compactMap(\.task).flatMap(\.prompts)
        guard !parts.isEmpty, !prompts.isEmpty else { return nil }
        let threshold = defaultMaskIoUThreshold
        return PrecisionCost(precision: parts.joined(separator: "; "), prompts: prompts.count,
                             promptsAtMaskIoU: prompts.filter { $0.minMaskIoU >= threshold }.count,
                             maskIoUThreshold: threshold, bestMaskAgreements: prompts.filter(\.bestAgrees).count,
                             minMaskIoU: prompts.map(\.minMaskIoU).min(),
                             maxIoUPredictionError: prompts.map(\.maxIoUPredictionError).max())
    }

    /// "int8 weights: 96/100 prompts with every mask IoU >= 0.98, best mask agrees 98/100, ..."
    public var summary: String {
        "\(precision): \(promptsAtMaskIoU)/\(prompts) prompts with every mask IoU >= \(maskIoUThreshold), "
            + "best mask agrees \(bestMaskAgreements)/\(prompts)"
            + (minMaskIoU.map { ", min mask IoU \(formatIoU($0))" } ?? "")
            + (maxIoUPredictionError.map { ", IoU prediction error <= \(formatFigure($0))" } ?? "")
    }
}
