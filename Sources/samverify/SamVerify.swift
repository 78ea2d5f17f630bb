import ArgumentParser
import Foundation
import SAMFormats
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

        Exit status: 0 every check passes; 1 a mismatch; 2 bad input or usage (missing model, unreadable \
        references, no cases, unknown --case, NaN or infinity in an input or reference file, a missing reference \
        output, a malformed input, a manifest tolerance over --max-atol/--max-rtol, a report that may not be \
        written where asked).
        """,
        version: Verifier.version)

    @Argument(help: ArgumentHelp("The .samw model file.", valueName: "MODEL.samw"))
    var model: String

    @Option(help: ArgumentHelp("The reference set's folder (or its references/ folder).", valueName: "DIR"))
    var references: String

    @Option(name: .customLong("case"),
            help: ArgumentHelp("Run only this case (repeatable): image_encoder or a decoder case folder's name.", valueName: "NAME"))
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

    @Flag(help: "No progress on standard error.")
    var quiet = false

    /// ArgumentParser's usage errors exit 64; samverify's contract is 2 for bad input or usage.
    static func main() {
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
        let options = VerifyOptions(cases: cases, atol: atol, rtol: rtol, maxAtol: maxAtol, maxRtol: maxRtol,
                                    locateDivergence: !noDivergence)
        let inputs = ReportFiles.inputs(model: model, references: references)
        let report: VerificationReport
        do {
            try ReportFiles.checkOutputs(json: json, junit: junit, inputs: inputs)
            report = try Verifier.verify(modelPath: model, referencesPath: references, options: options) { message in
                if !quiet { FileHandle.standardError.write(Data("samverify: \(TerminalText.escaped(message, keepingNewlines: true))\n".utf8)) }
            }
        } catch {
            FileHandle.standardError.write(Data("samverify: \(TerminalText.escaped(error.message, keepingNewlines: true))\n".utf8))
            ReportFiles.writeError(error, json: json, junit: junit, inputs: inputs)
            return error.exitCode
        }
        // Case and file names from the reference set are in the table: printed escaped.
        print(TerminalText.escaped(TableReport.render(report), keepingNewlines: true), terminator: "")
        do {
            if let json { try ReportFiles.writeJSON(report, to: json, inputs: inputs) }
            if let junit { try ReportFiles.writeJUnit(report, to: junit, inputs: inputs) }
        } catch {
            FileHandle.standardError.write(Data("samverify: \(TerminalText.escaped(error.message, keepingNewlines: true))\n".utf8))
            return error.exitCode
        }
        return report.exitCode
    }

    mutating func run() throws {
        let status = execute()
        if status != 0 { throw ExitCode(status) }
    }
}
