import SAMFiles
import SAMFormats

/// Which of the decoder's four masks the task-level check holds to its thresholds, and among which the
/// best mask is picked.
public enum MaskChoice: String, Codable, Sendable, CaseIterable {
    /// Masks 1-3, what `SamPredictor.predict(multimask_output=True)` returns (the default).
    case multimask
    /// All four.
    case all
    /// The one mask the official ONNX export returns with `return_single_mask=True`: the best score
    /// after adding (points - 2.5) * 1000 to mask 0's.
    case single

    var description: String {
        switch self {
        case .multimask: "masks 1-3 (multimask output)"
        case .all: "all 4 masks"
        case .single: "the single-mask output"
        }
    }
}

/// What the thresholded full-size masks must satisfy, native against reference, beside the tensor rule.
///
/// The defaults: every selected mask's IoU at least 0.99, and the best mask (highest predicted IoU)
/// the same one. Predicted-IoU error and mask-area difference are always reported and are held to a
/// bar only when the manifest sets one.
public struct TaskThresholds: Codable, Sendable, Equatable, CustomStringConvertible {
    public var minMaskIoU: Double
    public var requireBestMask: Bool
    /// Largest |native - reference| IoU prediction of a selected mask; nil: reported only.
    public var maxIoUPredictionError: Double?
    /// Largest |native area - reference area| / reference area of a selected mask; nil: reported only.
    public var maxAreaDifference: Double?
    public var masks: MaskChoice
    /// "default", "manifest" or "tolerance file".
    public var source: String

    public init(minMaskIoU: Double = 0.99, requireBestMask: Bool = true, maxIoUPredictionError: Double? = nil,
                maxAreaDifference: Double? = nil, masks: MaskChoice = .multimask, source: String = "default") {
        self.minMaskIoU = minMaskIoU
        self.requireBestMask = requireBestMask
        self.maxIoUPredictionError = maxIoUPredictionError
        self.maxAreaDifference = maxAreaDifference
        self.masks = masks
        self.source = source
    }

    public static let defaults = TaskThresholds()

    /// `task_thresholds` of a manifest ({min_mask_iou, require_best_mask, max_iou_prediction_error,
    /// max_area_difference, masks}); a key left out keeps its default. Bad values are bad input.
    init(json: JSONValue?, source: String) throws(VerifyError) {
        self.init()
        guard let json else { return }
        guard json.objectValue != nil else {
            throw VerifyError(.unreadableReferences, "references: \(source) task_thresholds is not an object")
        }
        self.source = source
        func number(_ key: String, in range: ClosedRange<Double>) throws(VerifyError) -> Double? {
            guard let value = json[key], value != .null else { return nil }
            guard let number = value.numberValue, number.isFinite, range.contains(number) else {
                throw VerifyError(.unreadableReferences, "references: \(source) task_thresholds.\(key) must be a number in "
                                  + "\(formatFigure(range.lowerBound))...\(formatFigure(range.upperBound))")
            }
            return number
        }
        if let value = try number("min_mask_iou", in: 0...1) { minMaskIoU = value }
        maxIoUPredictionError = try number("max_iou_prediction_error", in: 0...Double.greatestFiniteMagnitude)
        maxAreaDifference = try number("max_area_difference", in: 0...Double.greatestFiniteMagnitude)
        if let value = json["require_best_mask"], value != .null {
            guard case .bool(let flag) = value else {
                throw VerifyError(.unreadableReferences, "references: \(source) task_thresholds.require_best_mask must be true or false")
            }
            requireBestMask = flag
        }
        if let value = json["masks"], value != .null {
            guard let text = value.stringValue, let choice = MaskChoice(rawValue: text) else {
                throw VerifyError(.unreadableReferences, "references: \(source) task_thresholds.masks must be one of "
                                  + MaskChoice.allCases.map(\.rawValue).joined(separator: ", "))
            }
            masks = choice
        }
    }

    /// True when a threshold is weaker than the default's: the set lowers its own task-level bar.
    public var looserThanDefaults: Bool {
        minMaskIoU < Self.defaults.minMaskIoU || (!requireBestMask && Self.defaults.requireBestMask)
    }

    /// The manifest form, as `--calibrate` writes it.
    var json: JSONValue {
        var object: [String: JSONValue] = ["min_mask_iou": .number(minMaskIoU), "require_best_mask": .bool(requireBestMask),
                                           "masks": .string(masks.rawValue)]
        if let maxIoUPredictionError { object["max_iou_prediction_error"] = .number(maxIoUPredictionError) }
        if let maxAreaDifference { object["max_area_difference"] = .number(maxAreaDifference) }
        return .object(object)
    }

    public var description: String {
        var parts = ["mask IoU >= \(minMaskIoU) for \(masks.description)",
                     requireBestMask ? "best mask must agree" : "best mask reported only"]
        if let maxIoUPredictionError { parts.append("IoU prediction error <= \(formatFigure(maxIoUPredictionError))") }
        if let maxAreaDifference { parts.append("area difference <= \(formatFigure(maxAreaDifference)) of the reference's") }
        return parts.joined(separator: ", ") + " (\(source))" + (looserThanDefaults ? " (LOOSER than the defaults)" : "")
    }
}
