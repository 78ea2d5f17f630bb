import Foundation

/// The outcome of one check.
public enum CheckStatus: String, Codable, Sendable {
    /// Shape and dtype match and every element is within tolerance.
    case pass
    /// A shape or dtype mismatch, an element outside tolerance, a NaN or infinite output, or a model that
    /// cannot run the case's inputs.
    case fail
    /// The model cannot run this check by construction (a mask-input case for a model without a mask
    /// path, a decoder case for an encoder-only model). Neither a pass nor a failure; reported visibly.
    case notApplicable = "not_applicable"
    /// The reference set is at fault: a missing, unreadable or non-finite input or reference file.
    case badInput = "bad_input"
}

/// One output of one case against its reference file.
public struct OutputCheck: Codable, Sendable, Equatable {
    /// "image_embeddings", "low_res_masks", "iou_predictions", "split_sparse_embeddings", "split_masks",
    /// "split_iou_predictions".
    public var output: String
    /// Which run produced it: "image_encoder", "official" (SamOnnxModel's path), "split".
    public var path: String
    /// The reference file, relative to the set's root.
    public var reference: String
    public var status: CheckStatus
    /// Why it failed, is bad input or not applicable, when the figures alone do not say.
    public var problem: String?
    public var shape: [Int]?
    public var referenceShape: [Int]?
    public var dtype: String?
    public var referenceDType: String?
    public var tolerance: ResolvedTolerance
    public var figures: ErrorFigures?
    /// Wall time of the run that produced the output.
    public var seconds: Double
    /// True when the case's kind defines this output but the set has no reference file for it (status
    /// not applicable, and the run is not a pass).
    public var missingReference: Bool?
}

/// One case: its checks and, when one failed, where its run first diverges.
public struct CaseResult: Codable, Sendable, Equatable {
    public var name: String
    public var kind: ReferenceCase.Kind
    /// bad_input if any check is, else fail if any check fails, else not_applicable if a reference output is
    /// missing, else pass if any passes, else not_applicable.
    public var status: CheckStatus
    /// Input files the case reads, relative to the set's root.
    public var inputs: [String]
    public var note: String?
    public var outputs: [OutputCheck]
    public var divergence: Divergence?
    /// The task-level check: the thresholded full-size masks, native against reference (decoder cases'
    /// official path; the image encoder's end to end). nil for the preprocessing case.
    public var task: TaskParity?
    /// Every dumped module's figures (`VerifyOptions.measureModules`, what `--calibrate` measures).
    public var modules: [ModuleCheck]?
    public var seconds: Double

    /// bad_input if any check or the task is, else fail if any check or the task fails, else as before
    /// from the checks alone: a case whose tensors pass and whose masks do not fails.
    static func aggregate(_ checks: [OutputCheck], task: TaskParity? = nil) -> CheckStatus {
        let statuses = checks.map(\.status)
        if statuses.contains(.badInput) || task?.status == .badInput { return .badInput }
        if statuses.contains(.fail) || task?.status == .fail { return .fail }
        if checks.contains(where: { $0.missingReference == true }) { return .notApplicable }
        if statuses.contains(.pass) { return .pass }
        return .notApplicable
    }
}

/// What was verified, for the reports.
public struct ModelSummary: Codable, Sendable, Equatable {
    public var path: String
    public var components: [String]
    public var weightDType: String?
    /// False when the prompt encoder has no `mask_downscaling` (mask-input cases are then not applicable).
    public var maskPath: Bool
    public var densePositionalEncoding: String

    public init(path: String, components: [String], weightDType: String?, maskPath: Bool, densePositionalEncoding: String) {
        self.path = path
        self.components = components
        self.weightDType = weightDType
        self.maskPath = maskPath
        self.densePositionalEncoding = densePositionalEncoding
    }
}

public struct ReferenceSummary: Codable, Sendable, Equatable {
    /// As given on the command line.
    public var given: String
    public var root: String
    public var layout: String
    public var manifest: Bool
    public var cases: [String]
}

public struct CheckCounts: Codable, Sendable, Equatable {
    public var checks = 0
    public var passed = 0
    public var failed = 0
    public var badInput = 0
    public var notApplicable = 0
    /// Not-applicable checks whose reference file is missing (included in `notApplicable`).
    public var missing = 0
}

/// The task-level checks of a run, one per case that has one.
public struct TaskCounts: Codable, Sendable, Equatable {
    public var cases = 0
    public var passed = 0
    public var failed = 0
    public var badInput = 0
    public var notApplicable = 0
    /// Failed cases whose tensor checks all pass: caught at the task level only.
    public var failedWithTensorsPassing = 0

    public init(cases: Int = 0, passed: Int = 0, failed: Int = 0, badInput: Int = 0, notApplicable: Int = 0,
                failedWithTensorsPassing: Int = 0) {
        self.cases = cases
        self.passed = passed
        self.failed = failed
        self.badInput = badInput
        self.notApplicable = notApplicable
        self.failedWithTensorsPassing = failedWithTensorsPassing
    }
}

/// Everything a verification found; the JSON report is this, encoded.
public struct VerificationReport: Codable, Sendable, Equatable {
    public var tool = "samverify"
    public var version = Verifier.version
    public var model: ModelSummary
    public var references: ReferenceSummary
    public var rule = "an element fails only where |output - reference| > atol and > rtol * |reference|; "
        + "shape and dtype are checked first; NaN or infinity never passes"
    public var defaults = Tolerance.defaults
    public var commandLineAtol: Double?
    public var commandLineRtol: Double?
    /// Tolerances the reference set's manifest sets (shown beside the defaults).
    public var manifestTolerances: [ManifestTolerance]
    /// --max-atol / --max-rtol: the loosest tolerances a manifest may ask for.
    public var maxAtol: Double?
    public var maxRtol: Double?
    /// "bfloat16" when the run used the opt-in bfloat16 linear layers (`--bf16`); absent for float32.
    public var linearPrecision: String?
    /// The task-level cost of lower-precision weights or products against the float32 references
    /// (absent for a float32 run).
    public var precisionCost: PrecisionCost?
    /// true when int8 weights ran in int8 products (`--int8-products`); absent otherwise.
    public var int8Products: Bool?
    public var decoderInputs = "decoder cases take the reference references/image_embeddings.npy (PyTorch's) as input, "
        + "so they check the prompt encoder and mask decoder alone; case image_encoder checks the encoder"
    public var cases: [CaseResult]
    public var counts: CheckCounts
    /// The thresholds every task-level check used (the manifest's `task_thresholds`, else the defaults).
    public var taskThresholds: TaskThresholds
    public var taskCounts: TaskCounts
    /// `--determinism`: the same cases with 1, 2 and all worker threads and on each BLAS kernel path.
    public var determinism: DeterminismReport?
    /// "pass", "fail", "incomplete" (a reference output is missing) or "bad_input".
    public var status: String
    /// 0 every check passes; 1 a mismatch; 2 bad input or a missing reference output (it outranks a mismatch:
    /// the set cannot be trusted).
    public var exitCode: Int32

    init(model: ModelSummary, references: ReferenceSummary, commandLine: ToleranceOverride, cases: [CaseResult],
         manifestTolerances: [ManifestTolerance] = [], limits: ToleranceOverride = ToleranceOverride(),
         taskThresholds: TaskThresholds = .defaults) {
        self.model = model
        self.references = references
        commandLineAtol = commandLine.atol
        commandLineRtol = commandLine.rtol
        self.manifestTolerances = manifestTolerances
        maxAtol = limits.atol
        maxRtol = limits.rtol
        self.cases = cases
        var counts = CheckCounts()
        for check in cases.flatMap(\.outputs) {
            counts.checks += 1
            switch check.status {
            case .pass: counts.passed += 1
            case .fail: counts.failed += 1
            case .badInput: counts.badInput += 1
            case .notApplicable: counts.notApplicable += 1
            }
            if check.missingReference == true { counts.missing += 1 }
        }
        self.counts = counts
        self.taskThresholds = taskThresholds
        var taskCounts = TaskCounts()
        for result in cases {
            guard let task = result.task else { continue }
            taskCounts.cases += 1
            switch task.status {
            case .pass: taskCounts.passed += 1
            case .fail:
                taskCounts.failed += 1
                if result.outputs.allSatisfy({ $0.status == .pass }) { taskCounts.failedWithTensorsPassing += 1 }
            case .badInput: taskCounts.badInput += 1
            case .notApplicable: taskCounts.notApplicable += 1
            }
        }
        self.taskCounts = taskCounts
        (status, exitCode) = Self.outcome(counts, taskCounts, determinism: nil)
    }

    /// The run's status and exit code from its counts: bad input (or nothing verifiable) 2, a missing
    /// reference output 2, a mismatch (tensors, task level, or outputs that change with the thread count) 1.
    static func outcome(_ counts: CheckCounts, _ taskCounts: TaskCounts, determinism: DeterminismReport?) -> (String, Int32) {
        if counts.badInput > 0 || taskCounts.badInput > 0 || counts.passed + counts.failed == 0 || determinism?.status == .badInput {
            // Bad input, or nothing verifiable at all (every check not applicable).
            return ("bad_input", 2)
        } else if counts.missing > 0 {
            // The set lacks a reference output: what it would have checked was not verified.
            return ("incomplete", 2)
        } else if counts.failed > 0 || taskCounts.failed > 0 || determinism?.status == .fail {
            return ("fail", 1)
        }
        return ("pass", 0)
    }

    /// Adds a determinism run's findings, which may turn a pass into a failure.
    public mutating func attach(_ determinism: DeterminismReport) {
        self.determinism = determinism
        (status, exitCode) = Self.outcome(counts, taskCounts, determinism: determinism)
    }

    /// Every check, as (case, check).
    public var checks: [(case: CaseResult, check: OutputCheck)] {
        cases.flatMap { result in result.outputs.map { (result, $0) } }
    }

    public func check(_ caseName: String, _ output: String) -> OutputCheck? {
        cases.first { $0.name == caseName }?.outputs.first { $0.output == output }
    }

    /// Pretty-printed, sorted keys; infinities and NaN as the strings "inf", "-inf", "nan".
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try encoder.encode(self)
    }
}
