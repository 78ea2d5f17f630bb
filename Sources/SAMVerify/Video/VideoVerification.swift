import Foundation
import SAMImage
import SAMModelFile
import SAMPipeline
import SAMTensor

/// A video set checked frame by frame: the native tracker runs the set's prompts with the options
/// upstream ran, and every frame's full-resolution logits, thresholded masks (IoU per object) and
/// object scores are compared with upstream's; the memory path's dumps (features, memory-conditioned
/// features, object pointers, memories) are compared where the set has them. A failure names the
/// first frame, then the first module on it, that diverges.
public struct VideoVerification {
    /// Tolerances: logits and object scores absolute; masks by IoU; modules absolute plus relative to
    /// the reference's magnitude (memories are stored in bfloat16, so one rounding step apart can differ
    /// by 2^-8 of the value).
    public struct Tolerances: Sendable {
        public var logits: Double = 1e-3
        public var objectScore: Double = 1e-3
        public var minimumIoU: Double = 0.99
        public var moduleAbsolute: Double = 1e-3
        public var moduleRelative: Double = 1e-2
        public init() {}
    }

    public struct FrameRow: Sendable {
        public var stem: String
        public var maxLogitError: Double
        public var minimumIoU: Double
        public var maxScoreError: Double
        /// Low-resolution pixels whose hole filling went the other way than upstream's around a logit
        /// within rounding of 0 (see `HoleFillingFlips`); the logits they upscale to are not held to
        /// the tolerance. 0 when the logits are within it everywhere.
        public var holeFillingFlips: Int = 0
        /// Why logits beyond the tolerance were not put down to hole filling, when some pixel was filled on
        /// one side only (nil when the logits simply differ).
        public var notHoleFilling: String?
        public var passed: Bool
    }

    public struct ModuleRow: Sendable {
        public var stem: String
        public var object: Int
        public var name: String
        public var maxError: Double
        /// The share of elements within tolerance.
        public var withinShare: Double
        public var passed: Bool
    }

    public var frames: [FrameRow] = []
    public var modules: [ModuleRow] = []
    public var problems: [String] = []

    /// The verdict is the frames' (tensor and task level): modules locate a divergence. A memory made
    /// from a binarised mask (a prompted frame's) can differ where a logit within rounding of 0 falls on
    /// the other side, with no effect on what is tracked; it is reported, not failed.
    public var passed: Bool { problems.isEmpty && frames.allSatisfy(\.passed) }

    /// Runs `model` on `set`.
    public static func run(_ loaded: LoadedModel, set: VideoReferenceSet, tolerances: Tolerances = Tolerances(),
                           progress: (String) -> Void) throws(VerifyError) -> VideoVerification {
        var model: TrackingModel
        do { model = try TrackingModel(sam: loaded.sam) } catch { throw VerifyError(.badModel, "\(error)") }
        model.fillHoleArea = set.fillHoles ? set.fillHoleArea : 0
        model.addCorrectionsAsConditioning = set.correctionsAsConditioning
        model.nonOverlappingMasks = set.nonOverlappingMasks
        let clip = SetFrames(reference: set)
        var tracker: VideoTracker
        do { tracker = try VideoTracker(model: model, frames: clip) } catch { throw VerifyError(.unreadableReferences, "\(error)") }
        let observed = ObservedModules()
        let stems = set.frames.stems
        let folder = set.folder
        tracker.observer = { frame, object, name, value in
            // Kept only where the set has the dump to compare with.
            let path = "\(folder)/reference/modules/\(stems[frame])/object_\(object)/\(name).npy"
            if FileManager.default.fileExists(atPath: path) { observed.record(stems[frame], object, name, value) }
        }
        var result = VideoVerification()
        var yielded: [String] = []
        do {
            try tracker.run(set.prompts, masks: set.masks, start: set.startFrame, maxFrames: set.maxFrames, reverse: set.reverse) {
                (frame) throws(TrackingError) in
                let stem = stems[frame.frameIndex]
                yielded.append(stem)
                do { result.frames.append(try compare(frame, stem: stem, set: set, tolerances: tolerances)) } catch {
                    throw .frames("\(error)")
                }
                progress("frame \(stem): \(result.frames.last.map { String(format: "max |dlogit| %.2e, IoU >= %.4f", $0.maxLogitError, $0.minimumIoU) } ?? "")")
            }
        } catch {
            throw VerifyError(.badModel, "tracking: \(error)")
        }
        if yielded != set.expectedStems {
            result.problems.append("upstream yielded frames \(set.expectedStems.joined(separator: ",")), the tracker \(yielded.joined(separator: ","))")
        }
        // Modules: every dump the set has for a (frame, object) the run observed, last observation (the last round's).
        for (key, value) in observed.inOrder {
            let (stem, object, name) = (key.stem, key.object, key.name)
            guard let reference = try set.reference("modules/\(stem)/object_\(object)/\(name).npy") else { continue }
            guard reference.count == value.count else {
                result.problems.append("\(stem) object \(object) \(name): \(value.shape) against the reference's \(reference.shape)")
                continue
            }
            var worst = 0.0, within = 0
            for (a, b) in zip(value.data, reference.data) {
                let error = Double(abs(a - b))
                worst = max(worst, error.isNaN ? .infinity : error)
                if error <= tolerances.moduleAbsolute + tolerances.moduleRelative * Double(abs(b)) { within += 1 }
            }
            result.modules.append(ModuleRow(stem: stem, object: object, name: name, maxError: worst,
                                            withinShare: Double(within) / Double(max(value.count, 1)), passed: within == value.count))
        }
        return result
    }

    static func compare(_ frame: TrackedFrame, stem: String, set: VideoReferenceSet, tolerances: Tolerances) throws(VerifyError) -> FrameRow {
        guard let logits = try set.reference("logits/\(stem).npy") else {
            throw VerifyError(.unreadableReferences, "\(set.folder): no reference/logits/\(stem).npy")
        }
        guard logits.shape == frame.logits.shape else {
            throw VerifyError(.unreadableReferences, "reference/logits/\(stem).npy is \(logits.shape), the tracker's \(frame.logits.shape)")
        }
        var maxError = 0.0
        for (a, b) in zip(frame.logits.data, logits.data) {
            let error = Double(abs(a - b))
            maxError = max(maxError, error.isNaN ? .infinity : error)
        }
        let plane = logits.shape[2] * logits.shape[3]
        var minimumIoU = 1.0
        for object in 0..<logits.shape[0] {
            var intersection = 0, union = 0
            for i in (object * plane)..<((object + 1) * plane) {
                let a = frame.logits.data[i] > 0, b = logits.data[i] > 0
                if a && b { intersection += 1 }
                if a || b { union += 1 }
            }
            minimumIoU = min(minimumIoU, union == 0 ? 1 : Double(intersection) / Double(union))
        }
        var scoreError = 0.0
        if let scores = try set.reference("object_scores/\(stem).npy"), scores.count == frame.objectScores.count {
            for (a, b) in zip(frame.objectScores, scores.data) { scoreError = max(scoreError, Double(abs(a - b))) }
        }
        // Logits beyond the tolerance pass only where hole filling flipped around a logit within rounding of 0.
        var logitsHold = maxError <= tolerances.logits, flips = 0, notHoleFilling: String?
        if !logitsHold, set.fillHoles, let lowRes = try set.reference("low_res/\(stem).npy") {
            let explained = HoleFillingFlips(native: frame.lowResolutionLogits, reference: lowRes, nativeLogits: frame.logits,
                                             referenceLogits: logits, maxArea: set.fillHoleArea, tolerance: tolerances.logits,
                                             objectsCoupled: set.nonOverlappingMasks)
            if let reason = explained.unexplained {
                if explained.involvesHoleFilling { notHoleFilling = reason }
            } else {
                logitsHold = true
                flips = explained.disagreements
            }
        }
        let passed = logitsHold && minimumIoU >= tolerances.minimumIoU && scoreError <= tolerances.objectScore
        return FrameRow(stem: stem, maxLogitError: maxError, minimumIoU: minimumIoU, maxScoreError: scoreError,
                        holeFillingFlips: flips, notHoleFilling: notHoleFilling, passed: passed)
    }

    /// The report: one line per frame (how the error grows), the modules, then the verdict naming the
    /// first diverging frame and module.
    public var table: String {
        var lines = ["frame      max |dlogit|  min IoU   max |dscore|  status"]
        for row in frames {
            let status = !row.passed ? "FAIL" : row.holeFillingFlips == 0 ? "pass"
                : "pass (hole filling flipped at \(row.holeFillingFlips) low-res pixel\(row.holeFillingFlips == 1 ? "" : "s") beside a logit within rounding of 0)"
            lines.append(String(format: "%-10@ %11.3e  %7.5f  %11.3e  %@", row.stem as NSString, row.maxLogitError, row.minimumIoU,
                                row.maxScoreError, status as NSString))
            if let reason = row.notHoleFilling { lines.append("           not hole filling: \(reason)") }
        }
        if !modules.isEmpty {
            lines.append("modules (frame object name: max |error|)")
            for row in modules {
                lines.append(String(format: "  %@ %d %@: %.3e%@", row.stem as NSString, row.object, row.name as NSString, row.maxError,
                                    (row.passed ? "" : String(format: " differs (%.4f%% within tolerance)", 100 * row.withinShare)) as NSString))
            }
        }
        lines += problems.map { "problem: \($0)" }
        if passed {
            lines.append("PASS")
        } else if let frame = frames.first(where: { !$0.passed }) {
            // A preflight memory may differ without consequence (above): named only when nothing else differs.
            let diverging = modules.filter { !$0.passed && !$0.name.hasPrefix("preflight_") }
            let module = diverging.first { $0.stem == frame.stem } ?? diverging.first ?? modules.first { !$0.passed }
            lines.append("FAIL: first diverging frame \(frame.stem)" + (module.map { ", first diverging module \($0.name) (object \($0.object), frame \($0.stem))" } ?? ""))
        } else {
            lines.append("FAIL")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// The set's frames for the tracker.
struct SetFrames: VideoFrameSource {
    let reference: VideoReferenceSet
    var frameCount: Int { reference.frames.count }
    var frameSize: ImageSize { reference.frameSize }
    func frame(at index: Int) throws -> RGBImage { try reference.frames.frame(at: index) }
}

/// Module values seen during the run, by (frame stem, object, name); a later observation (a later
/// round's) replaces an earlier one and takes its place in time order.
final class ObservedModules: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Key: (time: Int, value: FloatTensor)] = [:]
    private var clock = 0
    struct Key: Hashable { let stem: String, object: Int, name: String }

    func record(_ stem: String, _ object: Int, _ name: String, _ value: FloatTensor) {
        lock.lock()
        clock += 1
        values[Key(stem: stem, object: object, name: name)] = (clock, value)
        lock.unlock()
    }

    /// In the order they were last seen.
    var inOrder: [(Key, FloatTensor)] {
        lock.lock()
        defer { lock.unlock() }
        return values.sorted { $0.value.time < $1.value.time }.map { ($0.key, $0.value.value) }
    }
}
