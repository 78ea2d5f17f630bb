import Foundation
import SAMFiles
import SAMFormats
import SAMTestSupport
import Testing
@testable import SAMVerify

/// `--calibrate`: tolerances from the error envelope of an honest port, and `--tolerances` reading them back.
@Suite("Verify: calibration")
struct CalibrationTests {
    /// The default atol, 1e-4, is 10-20x the worst honest error measured on both MobileSAM sets
    /// (docs/verification.md); calibrating the tiny set at margin 10 must land within a rounding step of it.
    @Test("calibrating the tiny set reproduces the default tolerances, and the manifest it writes is used")
    func tinyCalibration() throws {
        let folder = try temporaryFolder("calibrate")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let measured = try Verifier.verify(modelPath: model, referencesPath: TestPaths.tinyReferences,
                                           options: VerifyOptions(measureModules: true))
        let calibration = Calibration(report: measured, margin: 10, blas: Verifier.runtimeDescription)
        print(calibration.table)
        #expect([5e-5, 1e-4, 2e-4].contains(calibration.atol), "atol \(calibration.atol)")
        #expect(calibration.rtol >= 1e-5 && calibration.rtol <= 1e-4, "rtol \(calibration.rtol)")
        let embeddings = try #require(calibration.outputs.first { $0.name == "image_embeddings" })
        #expect(embeddings.maxAbs > 0 && embeddings.maxAbs < 1e-5 && embeddings.atol >= 10 * embeddings.maxAbs)
        #expect(calibration.outputs.map(\.name).contains("split_masks"))
        // Every dumped module of the encoder and of point1's decoder run has an envelope.
        #expect(calibration.modules.count >= 150)
        #expect(calibration.modules.contains { $0.name == "image_encoder.layers.1.blocks.0.mlp.fc1" })
        #expect(calibration.task.bestMaskDisagreements == 0 && calibration.task.thresholds.minMaskIoU == 0.99)

        let file = folder + "/calibrated.json"
        try calibration.manifest().write(to: URL(fileURLWithPath: file))
        let verified = try Verifier.verify(modelPath: model, referencesPath: TestPaths.tinyReferences, tolerancesFile: file)
        #expect(verified.exitCode == 0, "\(verified.problems)")
        let check = try #require(verified.check("point1", "low_res_masks"))
        #expect(check.tolerance.atolSource == "tolerance file output low_res_masks")
        #expect(check.tolerance.atol == calibration.outputs.first { $0.name == "low_res_masks" }?.atol)
        #expect(verified.taskThresholds.source == "tolerance file")
        #expect(TableReport.render(verified).contains("manifest tolerances: tolerance file: atol"))

        // The per-module bars are the ones the first-divergence walk uses.
        let broken = try ModelUnderTest.perturbed(model, tensor: "image_encoder.layers.1.blocks.0.mlp.fc1.weight", delta: 0.5,
                                                  to: folder + "/broken.samw")
        let failing = try Verifier.verify(modelPath: broken, referencesPath: TestPaths.tinyReferences, tolerancesFile: file,
                                          options: VerifyOptions(cases: ["image_encoder"]))
        let divergence = try #require(failing.cases.first?.divergence)
        #expect(divergence.module == "image_encoder.layers.1.blocks.0.mlp.fc1")
        let fc1 = try #require(calibration.modules.first { $0.name == "image_encoder.layers.1.blocks.0.mlp.fc1" })
        #expect(divergence.modules.first { $0.module == fc1.name }?.tolerance?.atol == fc1.atol)
    }

    @Test("tolerances round up to 1, 2 or 5 x 10^k")
    func rounding() {
        #expect(Calibration.roundUp(5.6e-5) == 1e-4)
        #expect(Calibration.roundUp(1.2e-5) == 2e-5)
        #expect(Calibration.roundUp(5e-5) == 5e-5)
        #expect(Calibration.roundUp(2.00001e-6) == 5e-6)
        #expect(Calibration.roundUp(0) == 0)
    }

    @Test("samverify --calibrate writes the manifest and exits 0; it never replaces a file of the set")
    func commandLine() throws {
        let folder = try temporaryFolder("calibrate-cli")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let run = try samverifyTool.run([model, "--references", TestPaths.tinyReferences, "--calibrate", folder + "/t.json", "--quiet"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let written = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/t.json")))
        #expect(written["calibration"]?["margin"]?.numberValue == 10)
        // The set-wide bar is 10x the worst error rounded up to 1, 2 or 5 x 10^k: on the tiny set
        // (errors up to ~5e-6, moving with the kernels' rounding order) 5e-5 or 1e-4. The report
        // prints the bar the file holds.
        let atol = try #require(written["tolerances"]?["atol"]?.numberValue)
        #expect(atol > 0 && atol <= 1e-4 && Calibration.roundUp(atol) == atol, "atol \(atol)")
        #expect(run.stdout.contains("set-wide: atol \(String(format: "%.2e", atol))"))
        let reuse = try samverifyTool.run([model, "--references", TestPaths.tinyReferences, "--tolerances", folder + "/t.json", "--quiet"])
        #expect(reuse.status == 0 && reuse.stdout.contains("tolerance file output low_res_masks"))

        let manifest = TestPaths.tinyReferences + "/manifest.json"
        let before = try Data(contentsOf: URL(fileURLWithPath: manifest))
        let refused = try samverifyTool.run([model, "--references", TestPaths.tinyReferences, "--calibrate", manifest, "--quiet"])
        #expect(refused.status == 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: manifest)) == before)
        #expect(try samverifyTool.run([model, "--references", TestPaths.tinyReferences, "--calibrate", folder + "/u.json",
                                       "--margin", "0.5"]).status == 2)
    }

    @Test("--calibrate's folder is checked before the run, as --json's: made when missing, refused at once when it cannot be")
    func calibrationFolder() throws {
        let folder = try temporaryFolder("calibrate-folder")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let nested = folder + "/missing/dir/cal.json"
        let made = try samverifyTool.run([model, "--references", TestPaths.tinyReferences, "--calibrate", nested, "--quiet"])
        #expect(made.status == 0, "\(made.stdout)\(made.stderr)")
        #expect(FileManager.default.fileExists(atPath: nested))
        #expect(made.stdout.contains("wrote \(nested) (exit 0)"))

        // A file where a folder must be: refused before any case runs (no table printed), nothing made.
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/plain"))
        for option in ["--calibrate", "--json", "--junit"] {
            let blocked = folder + "/plain/sub/out.json"
            let refused = try samverifyTool.run([model, "--references", TestPaths.tinyReferences, option, blocked, "--quiet"])
            #expect(refused.status == 2, "\(option): \(refused.status)")
            #expect(refused.stderr.contains("\(option) \(blocked)"), "\(option): \(refused.stderr)")
            #expect(!refused.stdout.contains("PASS") && !refused.stdout.contains("low_res_masks"), "\(option) ran the set: \(refused.stdout)")
        }
    }
}
