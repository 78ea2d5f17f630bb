import ArgumentParser
import Foundation
import SAMFiles
import SAMFormats
import SAMEverything
import SAMKernels
import SAMVerify

/// `samverify MODEL.samw --references DIR`: the native model against PyTorch's reference outputs.
@main
struct SamVerify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "samverify",
        abstract: "Run a .samw model on a reference set's inputs and compare every output with PyTorch's.",
        discussion: """
        DIR is a reference set in the layout converters/export_reference.py writes (reference_outputs/tiny is one), \
        read as it is: manifest.json, references/input_image.npy, \
        references/image_embeddings.npy, references/<case>/onnx_*.npy and split_*.npy. Cases are found from the files; \
        "image_encoder" is the encoder case, every other case runs the decoder on the reference image embeddings.

        An element fails only where |output - reference| exceeds both atol and rtol * |reference|; shape and dtype \
        are checked first; NaN or infinity never passes. Tolerances: --atol/--rtol, else the manifest's \
        (tolerances, cases[].tolerances), else atol 1e-4, rtol 1e-4 (README.md § Verification gives the measurements).
        On a failure the case's run is repeated module by module against the set's per-module dumps and the first \
        diverging module is named.

        Tolerances the manifest sets are shown beside the defaults; --max-atol/--max-rtol make any check whose \
        manifest tolerance is looser than they allow bad input (so a set cannot lower its own bar in CI). \
        Every output a case's kind defines must have its reference file: a missing one is reported n/a, naming \
        the file, and the run is not a pass. Every path a manifest names must stay inside the set, and only \
        regular files are read.
        Reports replace only a regular file, never the model or a file of the reference set.

        Task level: every decoder case's four low-res masks are brought to the photo's size as the predictor does, \
        thresholded, and compared with the reference's: mask IoU, whether the best mask (highest IoU prediction) is \
        the same one, the IoU prediction error, the mask-area difference. Thresholds from the manifest's \
        task_thresholds (default: IoU >= 0.99 for masks 1-3, best mask must agree); the image encoder case checks \
        the set's prompts end to end on the native embeddings. A case whose tensors pass and whose masks do not fails.
        --determinism reruns the cases in child processes with 1, 2 and all worker threads (SAM_NUM_THREADS), on \
        OpenBLAS's own kernels and its Haswell and Prescott ones (OPENBLAS_CORETYPE), and compares every output bit for \
        bit: thread counts must not change a bit, except a difference that repeats exactly run after run and stays \
        within atol (the kernels cut work by the worker count); kernel paths may differ within each output's atol.
        Where the set has its photo, resized image or input, case preprocess checks each stage from the one before.
        --calibrate FILE measures every output's and dumped module's error over the set and writes tolerances \
        --margin times over it (rounded up to 1, 2 or 5 x 10^k) as a manifest that --tolerances FILE reads.
        --report DIR draws per case the prompt, the reference and native masks side by side with their difference, \
        and a heat map of the logit error, with an index.html.
        --bf16 (CPUs with AVX512_BF16) runs the linear layers (and the attention of SAM 2's memory attention and Hiera's global blocks) in bfloat16 products, the opt-in lower-precision path: \
        the table and the JSON say so, its tensors fail float32's tolerances by design, and its task-level figures \
        are the measure of whether it serves the model.

        Exit status: 0 every check passes; 1 a mismatch; 2 bad input or usage (missing model, unreadable \
        references, no cases, unknown --case, NaN or infinity in an input or reference file, a missing reference \
        output, a malformed input, a manifest tolerance over --max-atol/--max-rtol, a report that may not be \
        written where asked). With --determinism, outputs that change with the thread count are a mismatch (1). \
        --calibrate exits 0 once the manifest is written (2 on bad input).
        """,
        version: Verifier.version)

    @Argument(help: ArgumentHelp("The .samw model file.", valueName: "MODEL.samw"))
    var model: String

    @Option(help: ArgumentHelp("The reference set's folder (or its references/ folder).", valueName: "DIR"))
    var references: String

    @Option(name: .customLong("case"),
            help: ArgumentHelp("Run only this case (repeatable): image_encoder, preprocess or a decoder case folder's name.",
                               valueName: "NAME"))
    var cases: [String] = []

    @Option(help: ArgumentHelp("Absolute tolerance (overrides the manifest and the default 1e-4).", valueName: "A"))
    var atol: Double?

    @Option(help: ArgumentHelp("Relative tolerance (overrides the manifest and the default 1e-4).", valueName: "R"))
    var rtol: Double?

    @Option(name: .customLong("max-atol"),
            help: ArgumentHelp("Largest atol a manifest may set; a check asking more is bad input (CI's guard).", valueName: "A"))
    var maxAtol: Double?

    @Option(name: .customLong("max-rtol"),
            help: ArgumentHelp("Largest rtol a manifest may set; a check asking more is bad input (CI's guard).", valueName: "R"))
    var maxRtol: Double?

    @Option(help: ArgumentHelp("Write the full report as JSON here (atomically).", valueName: "FILE"))
    var json: String?

    @Option(help: ArgumentHelp("Write a JUnit XML report here (atomically).", valueName: "FILE"))
    var junit: String?

    @Flag(name: .customLong("no-divergence"), help: "Do not re-run failing cases module by module.")
    var noDivergence = false

    @Option(help: ArgumentHelp("Tolerances and task thresholds from this manifest (as --calibrate writes it) instead of the set's.",
                               valueName: "FILE"))
    var tolerances: String?

    @Flag(help: ArgumentHelp("Also run every case with 1, 2 and all worker threads on each BLAS kernel path, in child "
                             + "processes; outputs must be bit-identical across thread counts."))
    var determinism = false

    @Option(help: ArgumentHelp("Measure each output's and module's error over the set and write suggested tolerances here.",
                               valueName: "FILE"))
    var calibrate: String?

    @Option(help: ArgumentHelp("With --calibrate: tolerance = margin x the worst figure, rounded up.", valueName: "M"))
    var margin: Double = 10

    @Option(help: ArgumentHelp("Write pictures per case (prompt, masks side by side, logit error) and an index.html here.",
                               valueName: "DIR"))
    var report: String?

    @Option(name: .customLong("dump-outputs"), help: ArgumentHelp("Write every native output here (what --determinism compares).",
                                                                 valueName: "DIR", visibility: .hidden))
    var dumpOutputs: String?

    @Flag(name: .customLong("bf16"),
          help: ArgumentHelp("Run the linear layers in bfloat16 products (the opt-in lower-precision path, CPUs with AVX512_BF16), "
                             + "to measure its accuracy: its errors exceed float32's tolerances, so judge it by the task-level figures."))
    var bfloat16 = false

    @Flag(name: .customLong("int8-products"),
          help: ArgumentHelp("With a model converted --dtype int8, multiply its int8 weights in int8 products (inputs rounded "
                             + "to int8 per row), to measure their cost: the report's precision-cost line gives the task-level figures."))
    var int8Products = false

    @Flag(help: "No progress on standard error.")
    var quiet = false

    /// ArgumentParser's usage errors exit 64; samverify's contract is 2 for bad input or usage.
    static func main() {
        Kernels.restartWithStrongerBLASKernelsIfNeeded()  // before anything else: OpenBLAS reads its kernel choice as it loads
        FaultContainment.install()  // a libhdf5 crash, or a model truncated while mapped, exits 2 naming the file
        FaultContainment.removeTemporariesOnInterrupt()  // Ctrl-C leaves no temporary beside a report
        var parsed: ParsableCommand
        do {
            parsed = try parseAsRoot()
        } catch {
            if exitCode(for: error) == .success { exit(withError: error) }  // --help, --version
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(2)
        }
        guard let command = parsed as? SamVerify else {
            // The built-in help command.
            do { try parsed.run() } catch { exit(withError: error) }
            Foundation.exit(0)
        }
        Foundation.exit(command.execute())
    }

    func execute() -> Int32 {
        // This process is the tool's own: BLAS on one thread, freed memory kept for reuse.
        Kernels.tuneProcessForInference()
        if AutomaticMaskReferenceSet.isSet(at: references) { return verifyEverything() }
        if VideoReferenceSet.isSet(at: references) { return verifyVideo() }
        if bfloat16 {
            do { try Kernels.setLinearPrecision(.bfloat16) } catch {
                FileHandle.standardError.write(Data("samverify: --bf16: \(error)\n".utf8))
                return 2
            }
        }
        Kernels.setInt8Products(int8Products)
        let options = VerifyOptions(cases: cases, atol: atol, rtol: rtol, maxAtol: maxAtol, maxRtol: maxRtol,
                                    locateDivergence: !noDivergence, measureModules: calibrate != nil)
        let inputs = ReportFiles.inputs(model: model, references: references) + [tolerances].compactMap { $0 }
        var result: VerificationReport
        var pictures: PictureReport?
        do throws(VerifyError) {
            try ReportFiles.checkOutputs(json: json, junit: junit, inputs: inputs)
            try checkCalibrationOutput(inputs: inputs)
            guard margin.isFinite, margin >= 1 else { throw VerifyError(.usage, "--margin must be a finite number >= 1, not \(margin)") }
            let set = try ReferenceSet.open(references, tolerancesFile: tolerances)
            if let report {
                let names = cases.isEmpty ? set.caseNames : set.caseNames.filter(cases.contains)
                pictures = try PictureReport(folder: report, references: set, cases: names, inputs: inputs)
            }
            var dump: OutputDump?
            if let dumpOutputs { dump = try OutputDump(folder: dumpOutputs) }
            let observers: [ArtifactObserver] = [dump.map { $0.record }, pictures.map { $0.record }].compactMap { $0 }
            result = try Verifier.verify(modelPath: model, references: set, referencesPath: references, options: options,
                                         progress: progress,
                                         artifacts: observers.isEmpty ? nil : { artifacts in observers.forEach { $0(artifacts) } })
            try dump?.finish()
            if determinism { result.attach(try runDeterminism(bounds: DeterminismRun.Bounds(result))) }
        } catch {
            FileHandle.standardError.write(Data("samverify: \(TerminalText.escaped(error.message, keepingNewlines: true))\n".utf8))
            ReportFiles.writeError(error, json: json, junit: junit, inputs: inputs)
            return error.exitCode
        }
        var status = result.exitCode
        if let calibrate {
            let calibration = Calibration(report: result, margin: margin, blas: Verifier.runtimeDescription)
            print(calibration.table, terminator: "")
            if result.exitCode == 2 {
                print("with the tolerances in use the run is \(result.status.uppercased()) (exit 2)")
                FileHandle.standardError.write(Data("samverify: the set is bad input or incomplete; \(calibrate) was not written\n".utf8))
                return 2
            }
            do {
                // As --json: a missing folder is made (checked before the run).
                try ReportFiles.write(Array(try calibration.manifest()), to: calibrate, option: "--calibrate", inputs: inputs)
            } catch {
                let message = (error as? VerifyError)?.message ?? "--calibrate \(calibrate): \(error)"
                FileHandle.standardError.write(Data("samverify: \(TerminalText.escaped(message, keepingNewlines: true))\n".utf8))
                return 2
            }
            // Said once the manifest is written: calibrating exits 0 whatever the status with the tolerances in use.
            print("with the tolerances in use the run is \(result.status.uppercased()); wrote \(calibrate) (exit 0)")
            status = 0
        } else {
            // Case and file names from the reference set are in the table: printed escaped.
            print(TerminalText.escaped(TableReport.render(result), keepingNewlines: true), terminator: "")
        }
        do {
            if let json { try ReportFiles.writeJSON(result, to: json, inputs: inputs) }
            if let junit { try ReportFiles.writeJUnit(result, to: junit, inputs: inputs) }
            try pictures?.finish(result)
        } catch {
            FileHandle.standardError.write(Data("samverify: \(TerminalText.escaped(error.message, keepingNewlines: true))\n".utf8))
            return error.exitCode
        }
        return status
    }

    func progress(_ message: String) {
        if !quiet { FileHandle.standardError.write(Data("samverify: \(TerminalText.escaped(message, keepingNewlines: true))\n".utf8)) }
    }

    /// `--calibrate`'s file may be written where asked (touching nothing).
    func checkCalibrationOutput(inputs: [String]) throws(VerifyError) {
        guard let calibrate else { return }
        for (option, other) in [("--json", json), ("--junit", junit)] where other == calibrate {
            throw VerifyError(.outputRefused, "--calibrate and \(option) name the same file \(calibrate); nothing was written")
        }
        try ReportFiles.checkOutput(calibrate, option: "--calibrate", inputs: inputs)
    }

    /// This executable again, per configuration, on the same cases and tolerances.
    func runDeterminism(bounds: DeterminismRun.Bounds) throws(VerifyError) -> DeterminismReport {
        var arguments = [model, "--references", references]
        if let tolerances { arguments += ["--tolerances", tolerances] }
        for name in cases { arguments += ["--case", name] }
        if let atol { arguments += ["--atol", String(atol)] }
        if let rtol { arguments += ["--rtol", String(rtol)] }
        return try DeterminismRun.run(executable: Self.executablePath, arguments: arguments, plan: .standard, bounds: bounds,
                                      progress: progress)
    }

    /// The running executable (/proc/self/exe where there is one).
    static var executablePath: String {
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return resolved }
        return Bundle.main.executablePath ?? CommandLine.arguments[0]
    }

    mutating func run() throws {
        let status = execute()
        if status != 0 { throw ExitCode(status) }
    }
}
