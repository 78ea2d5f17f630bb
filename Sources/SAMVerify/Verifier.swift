import Foundation
import SAMBLAS
import SAMFormats
import SAMKernels
import SAMModel
import SAMModelFile
import SAMParallel
import SAMTensor

/// What to verify and how strictly.
public struct VerifyOptions: Sendable, Equatable {
    /// Case names to run (`image_encoder` or a decoder case); empty runs every case.
    public var cases: [String]
    /// Command-line tolerances: they override the manifest's and the defaults.
    public var atol: Double?
    public var rtol: Double?
    /// The largest tolerances a reference set's manifest may ask for: a check whose manifest tolerance
    /// is looser is bad input, so the set under test cannot lower its own bar.
    public var maxAtol: Double?
    public var maxRtol: Double?
    /// Re-run a failing case's dumped run module by module to name its first diverging module.
    public var locateDivergence: Bool
    /// Re-run every case that has per-module dumps module by module, passing or not, and keep each
    /// module's figures (`CaseResult.modules`): what `--calibrate` measures.
    public var measureModules: Bool

    public init(cases: [String] = [], atol: Double? = nil, rtol: Double? = nil, maxAtol: Double? = nil, maxRtol: Double? = nil,
                locateDivergence: Bool = true, measureModules: Bool = false) {
        self.cases = cases
        self.atol = atol
        self.rtol = rtol
        self.maxAtol = maxAtol
        self.maxRtol = maxRtol
        self.locateDivergence = locateDivergence
        self.measureModules = measureModules
    }

    func validate() throws(VerifyError) {
        for (name, value) in [("--atol", atol), ("--rtol", rtol), ("--max-atol", maxAtol), ("--max-rtol", maxRtol)] {
            if let value, !(value.isFinite && value >= 0) {
                throw VerifyError(.usage, "\(name) must be a finite number >= 0, not \(value)")
            }
        }
        if let atol, let maxAtol, atol > maxAtol {
            throw VerifyError(.usage, "--atol \(formatFigure(atol)) is more than --max-atol \(formatFigure(maxAtol))")
        }
        if let rtol, let maxRtol, rtol > maxRtol {
            throw VerifyError(.usage, "--rtol \(formatFigure(rtol)) is more than --max-rtol \(formatFigure(maxRtol))")
        }
    }
}

/// Runs the native model on a reference set's inputs and compares every output with PyTorch's.
///
/// The image encoder is a case of its own (`references/input_image.npy` -> `image_embeddings.npy`),
/// run once. Decoder cases take the reference `image_embeddings.npy` as input, so they check the prompt
/// encoder and mask decoder alone: the official path (`onnx_*`: all four low-res masks and IoU scores)
/// and, where the case has `split_*` files, the split path (sparse embeddings, masks, IoU scores).
public enum Verifier {
    public static let version = "0.1.0"

    /// How this process runs the model: worker threads and BLAS kernels ("workers 2, OpenBLAS ... core: Cooperlake").
    public static var runtimeDescription: String {
        "workers \(Workers.count), \(BLAS.backendDescription)"
            + (Kernels.linearPrecision == .bfloat16 ? ", linear layers in bfloat16 (--bf16)" : "")
    }

    /// Loads `modelPath` (.samw) and the reference set at `referencesPath` (with `tolerancesFile`'s
    /// tolerances when given), then verifies. Throws (exit 2) when the model or the set cannot be used at
    /// all; per-case problems are reported. `artifacts` sees each case's outputs as it finishes.
    public static func verify(modelPath: String, referencesPath: String, tolerancesFile: String? = nil,
                              options: VerifyOptions = VerifyOptions(), progress: (String) -> Void = { _ in },
                              artifacts: ArtifactObserver? = nil) throws(VerifyError) -> VerificationReport {
        try options.validate()
        guard FileManager.default.fileExists(atPath: modelPath) else {
            throw VerifyError(.missingModel, "model: \(modelPath) does not exist")
        }
        return try verify(modelPath: modelPath, references: try ReferenceSet.open(referencesPath, tolerancesFile: tolerancesFile),
                          referencesPath: referencesPath, options: options, progress: progress, artifacts: artifacts)
    }

    /// Loads `modelPath` and verifies it against an opened reference set.
    public static func verify(modelPath: String, references: ReferenceSet, referencesPath: String? = nil,
                              options: VerifyOptions = VerifyOptions(), progress: (String) -> Void = { _ in },
                              artifacts: ArtifactObserver? = nil) throws(VerifyError) -> VerificationReport {
        try options.validate()
        guard FileManager.default.fileExists(atPath: modelPath) else {
            throw VerifyError(.missingModel, "model: \(modelPath) does not exist")
        }
        let loaded: LoadedModel
        do { loaded = try ModelFile.load(modelPath) } catch {
            throw VerifyError(.badModel, "model: \(error)")
        }
        let summary = ModelSummary(
            path: modelPath, components: loaded.metadata.components, weightDType: loaded.metadata.weightDType,
            maskPath: loaded.sam.promptEncoder?.maskDownscaling != nil,
            densePositionalEncoding: loaded.metadata.densePositionalEncoding != nil ? "stored in the model file" : "computed from prompt_encoder.pe_layer")
        return try verify(sam: loaded.sam, model: summary, references: references, referencesPath: referencesPath,
                          options: options, progress: progress, artifacts: artifacts)
    }

    /// Verifies an already built model against an opened reference set.
    public static func verify(sam: Sam, model: ModelSummary, references: ReferenceSet, referencesPath: String? = nil,
                              options: VerifyOptions = VerifyOptions(), progress: (String) -> Void = { _ in },
                              artifacts: ArtifactObserver? = nil) throws(VerifyError) -> VerificationReport {
        try options.validate()
        guard !references.cases.isEmpty else {
            throw VerifyError(.noCases, "references: \(references.root) holds no case (no references/input_image.npy and "
                              + "no references/<case>/ folder with onnx_*.npy or split_*.npy files)")
        }
        var selected = references.cases
        if !options.cases.isEmpty {
            let unknown = options.cases.filter { !references.caseNames.contains($0) }
            guard unknown.isEmpty else {
                throw VerifyError(.unknownCase, "unknown case\(unknown.count == 1 ? "" : "s") "
                                  + unknown.map { "'\($0)'" }.joined(separator: ", ")
                                  + "; this reference set has: " + references.caseNames.joined(separator: ", "))
            }
            selected = references.cases.filter { options.cases.contains($0.name) }
        }
        let runner = CaseRunner(sam: sam, references: references, options: options, observer: artifacts)
        var results: [CaseResult] = []
        for referenceCase in selected {
            progress("\(referenceCase.name): running")
            let result = runner.run(referenceCase)
            progress("\(referenceCase.name): \(result.status.rawValue)")
            results.append(result)
        }
        let summary = ReferenceSummary(given: referencesPath ?? references.root, root: references.root,
                                       layout: references.layoutDescription, manifest: references.manifest != nil,
                                       cases: references.caseNames)
        var report = VerificationReport(model: model, references: summary,
                                        commandLine: ToleranceOverride(atol: options.atol, rtol: options.rtol), cases: results,
                                        manifestTolerances: references.manifestTolerances,
                                        limits: ToleranceOverride(atol: options.maxAtol, rtol: options.maxRtol),
                                        taskThresholds: references.taskThresholds)
        report.decoderInputs = runner.decoderInputsNote
        if Kernels.linearPrecision == .bfloat16 { report.linearPrecision = Kernels.LinearPrecision.bfloat16.rawValue }
        if Kernels.int8Products && model.weightDType == "int8" { report.int8Products = true }
        report.precisionCost = PrecisionCost.measure(weightDType: model.weightDType, linearPrecision: report.linearPrecision,
                                                     int8Products: report.int8Products == true, cases: results)
        return report
    }
}
