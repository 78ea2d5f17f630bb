import Foundation
import SAMFiles
import SAMFormats

/// Tolerances from measurement: each output's and each dumped module's error envelope over a reference
/// set (the model is taken as an honest port), and the tolerances that put a stated margin over it,
/// written as a manifest `samverify --tolerances` reads.
///
/// A tolerance is `margin` times the worst figure, rounded up to 1, 2 or 5 times a power of ten. atol
/// comes from the largest absolute error; rtol from the largest relative error among elements whose
/// reference is at least 1 in magnitude (the only place rtol can widen the bar beyond atol), and is the
/// set-wide atol where no output has such elements. The task-level bar loosens the default mask IoU
/// only when the measured IoU needs it (1 - margin * (1 - worst IoU)), and bounds the IoU prediction
/// error as the tensors are.
public struct Calibration: Codable, Sendable, Equatable {
    /// One output's or module's envelope and the tolerance suggested for it.
    public struct Envelope: Codable, Sendable, Equatable {
        public var name: String
        /// Largest absolute error, and where ("case" or "case#call").
        public var maxAbs: Double
        public var worstCase: String
        /// Largest relative error where |reference| >= 1 (nil: no such element).
        public var maxRelAtLeastOne: Double?
        /// How many comparisons the envelope covers.
        public var samples: Int
        public var atol: Double
        public var rtol: Double?
    }

    public var margin: Double
    public var rounding = "up to 1, 2 or 5 x 10^k"
    public var model: String
    public var references: String
    public var blas: String
    public var outputs: [Envelope]
    public var modules: [Envelope]
    /// The set-wide suggestion: the loosest output's.
    public var atol: Double
    public var rtol: Double
    public var task: TaskEnvelope
    public var defaults = Tolerance.defaults

    public struct TaskEnvelope: Codable, Sendable, Equatable {
        public var prompts: Int
        public var minMaskIoU: Double?
        public var maxIoUPredictionError: Double?
        public var maxAreaDifference: Double?
        public var bestMaskDisagreements: Int
        public var thresholds: TaskThresholds
    }

    /// The envelopes of `report` (run with `VerifyOptions.measureModules`) with `margin` over them.
    public init(report: VerificationReport, margin: Double, blas: String) {
        self.margin = margin
        model = report.model.path
        references = report.references.root
        self.blas = blas
        var byOutput: [String: Envelope] = [:], order: [String] = []
        for (result, check) in report.checks {
            guard let figures = check.figures else { continue }
            Self.widen(&byOutput, &order, name: check.output, figures: figures, at: result.name)
        }
        var byModule: [String: Envelope] = [:], moduleOrder: [String] = []
        for result in report.cases {
            for module in result.modules ?? [] {
                guard let figures = module.figures else { continue }
                Self.widen(&byModule, &moduleOrder, name: module.module, figures: figures, at: "\(result.name)#\(module.call)")
            }
        }
        func suggest(_ envelope: inout Envelope) {
            envelope.atol = Self.roundUp(margin * envelope.maxAbs)
            envelope.rtol = envelope.maxRelAtLeastOne.map { Self.roundUp(margin * $0) }
        }
        outputs = order.map { name in var envelope = byOutput[name]!; suggest(&envelope); return envelope }
        modules = moduleOrder.map { name in var envelope = byModule[name]!; suggest(&envelope); return envelope }
        atol = outputs.map(\.atol).max() ?? Tolerance.defaults.atol
        rtol = outputs.compactMap(\.rtol).max() ?? atol

        let prompts = report.cases.compactMap(\.task).flatMap(\.prompts)
        let minIoU = prompts.map(\.minMaskIoU).min()
        let iouError = prompts.map(\.maxIoUPredictionError).max()
        var thresholds = TaskThresholds(source: "calibration")
        if let minIoU {
            let floor = max(0, 1 - margin * (1 - minIoU))
            thresholds.minMaskIoU = min(TaskThresholds.defaults.minMaskIoU, (floor * 10_000).rounded(.down) / 10_000)
        }
        thresholds.maxIoUPredictionError = iouError.map { Self.roundUp(margin * $0) }
        task = TaskEnvelope(prompts: prompts.count, minMaskIoU: minIoU, maxIoUPredictionError: iouError,
                            maxAreaDifference: prompts.map(\.maxAreaDifference).max(),
                            bestMaskDisagreements: prompts.filter { !$0.bestAgrees }.count, thresholds: thresholds)
    }

    static func widen(_ envelopes: inout [String: Envelope], _ order: inout [String], name: String, figures: ErrorFigures, at place: String) {
        guard var envelope = envelopes[name] else {
            envelopes[name] = Envelope(name: name, maxAbs: figures.maxAbs, worstCase: place, maxRelAtLeastOne: figures.maxRelAtLeastOne,
                                       samples: 1, atol: 0, rtol: nil)
            order.append(name)
            return
        }
        if figures.maxAbs > envelope.maxAbs { (envelope.maxAbs, envelope.worstCase) = (figures.maxAbs, place) }
        if let rel = figures.maxRelAtLeastOne { envelope.maxRelAtLeastOne = max(envelope.maxRelAtLeastOne ?? 0, rel) }
        envelope.samples += 1
        envelopes[name] = envelope
    }

    /// The smallest of 1, 2, 5 x 10^k at or above `value` (0 stays 0).
    static func roundUp(_ value: Double) -> Double {
        guard value > 0, value.isFinite else { return value.isFinite ? 0 : value }
        let exponent = floor(log10(value))
        for step in [1.0, 2.0, 5.0, 10.0] {
            let candidate = Double("\(step)e\(Int(exponent))")!
            if candidate >= value * (1 - 1e-12) { return candidate }
        }
        return Double("1e\(Int(exponent) + 1)")!
    }

    /// The manifest `--tolerances` reads: `tolerances` {atol, rtol, outputs, modules}, `task_thresholds`,
    /// and this calibration (the measured envelopes) under `calibration`.
    public func manifest() throws -> Data {
        var outputTolerances: [String: JSONValue] = [:]
        for envelope in outputs {
            var entry: [String: JSONValue] = ["atol": .number(envelope.atol)]
            if let rtol = envelope.rtol { entry["rtol"] = .number(rtol) }
            outputTolerances[envelope.name] = .object(entry)
        }
        var moduleTolerances: [String: JSONValue] = [:]
        for envelope in modules {
            var entry: [String: JSONValue] = ["atol": .number(envelope.atol)]
            if let rtol = envelope.rtol { entry["rtol"] = .number(rtol) }
            moduleTolerances[envelope.name] = .object(entry)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let measured = try JSONDecoder().decode(JSONValue.self, from: encoder.encode(self))
        let document: JSONValue = .object([
            "tolerances": .object(["atol": .number(atol), "rtol": .number(rtol), "outputs": .object(outputTolerances),
                                   "modules": .object(moduleTolerances)]),
            "task_thresholds": task.thresholds.json,
            "calibration": measured,
            "tolerances_note": .string("written by samverify --calibrate: \(margin)x the worst figure measured, rounded up to "
                                       + "1, 2 or 5 x 10^k; read with samverify --tolerances FILE"),
        ])
        return try encoder.encode(document) + Data([0x0A])
    }
}
