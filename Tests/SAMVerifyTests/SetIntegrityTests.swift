import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMVerify
#if canImport(Glibc)
import Glibc
#endif

/// A reference set decides nothing on its own: every output its cases define is compared (or the run
/// is not a pass), malformed inputs are bad input, paths stay inside the set, and a manifest cannot
/// loosen the bar past --max-atol/--max-rtol without it showing.
@Suite("Verify: the reference set cannot pass a model by leaving things out")
struct SetIntegrityTests {
    @Test("A missing reference output is n/a naming the file, and the run is not a pass (exit 2)")
    func missingOutput() throws {
        let folder = try temporaryFolder("missing-output")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let references = try ReferenceCopy.tiny(in: folder)
        try FileManager.default.removeItem(atPath: references + "/references/point1/onnx_iou_predictions.npy")
        let report = try Verifier.verify(modelPath: model, referencesPath: references)
        let check = try #require(report.check("point1", "iou_predictions"))
        #expect(check.status == .notApplicable && check.missingReference == true)
        #expect(check.problem == "reference references/point1/onnx_iou_predictions.npy is missing, so iou_predictions was not compared")
        #expect(report.cases.first { $0.name == "point1" }?.status == .notApplicable)
        #expect(report.counts.missing == 1 && report.counts.passed == 32)
        #expect(report.status == "incomplete" && report.exitCode == 2)
        let table = TableReport.render(report)
        #expect(table.contains("(1 of them a missing reference output); task level") && table.contains("-> INCOMPLETE (exit 2)"))
    }

    @Test("A missing image_embeddings.npy of the encoder case is reported on its check")
    func missingEncoderOutput() throws {
        let folder = try temporaryFolder("missing-embeddings")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let references = try ReferenceCopy.tiny(in: folder)
        try FileManager.default.removeItem(atPath: references + "/references/image_embeddings.npy")
        let report = try Verifier.verify(modelPath: model, referencesPath: references, options: VerifyOptions(cases: ["image_encoder"]))
        let check = try #require(report.check("image_encoder", "image_embeddings"))
        #expect(check.missingReference == true && check.problem?.contains("references/image_embeddings.npy is missing") == true)
        #expect(report.exitCode == 2)
    }

    @Test("Inputs of the wrong shape or with impossible values are bad input (exit 2), not a pass",
          arguments: [("references/point1/onnx_point_coords.npy", [2] as [Int], "expected [1,N,2]"),
                      ("references/point1/onnx_point_labels.npy", [1, 7], "expected [1,2]"),
                      ("references/points5/split_points.npy", [5, 2], "expected [1,N,2]"),
                      ("references/input_image.npy", [1, 3, 8, 8], "expected [1,3,128,128]"),
                      ("references/point1/onnx_has_mask_input.npy", [2], "expected [1]")])
    func malformedInputs(file: String, shape: [Int], says: String) throws {
        let folder = try temporaryFolder("malformed")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let references = try ReferenceCopy.tiny(in: folder)
        let count = shape.reduce(1, *)
        try NPY.write(Tensor(shape: shape, floats: [Float](repeating: 1, count: count)), to: references + "/" + file)
        let report = try Verifier.verify(modelPath: model, referencesPath: references, options: VerifyOptions(locateDivergence: false))
        let bad = report.checks.filter { $0.check.status == .badInput }
        #expect(!bad.isEmpty, "\(report.problems)")
        #expect(bad.allSatisfy { $0.check.problem?.contains(says) == true }, "\(report.problems)")
        #expect(report.exitCode == 2)
    }

    @Test("A label outside -1...3 is bad input")
    func badLabel() throws {
        let folder = try temporaryFolder("bad-label")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let references = try ReferenceCopy.tiny(in: folder)
        try ReferenceCopy.editNPY(references, "references/point1/onnx_point_labels.npy") { $0[0] = 7 }
        let report = try Verifier.verify(modelPath: model, referencesPath: references, options: VerifyOptions(cases: ["point1"]))
        #expect(report.check("point1", "low_res_masks")?.problem?.contains("holds label 7.0 at [0,0]") == true)
        #expect(report.exitCode == 2)
    }

    @Test("Manifest paths that leave the set (.., absolute, a link out) or name a FIFO are refused at open; files kept",
          arguments: ["../../outside/x.npy", "/etc/hostname", "references/escape.npy", "references/fifo.npy"])
    func manifestPathEscape(path: String) throws {
        let folder = try temporaryFolder("escape")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let references = try ReferenceCopy.tiny(in: folder)
        try FileManager.default.createDirectory(atPath: folder + "/outside", withIntermediateDirectories: true)
        try Data("secret".utf8).write(to: URL(fileURLWithPath: folder + "/outside/x.npy"))
        try FileManager.default.createSymbolicLink(atPath: references + "/references/escape.npy", withDestinationPath: folder + "/outside/x.npy")
        #expect(mkfifo(references + "/references/fifo.npy", 0o600) == 0)
        try ReferenceCopy.editManifest(references) { manifest in
            var modules = try #require(manifest["module_outputs"] as? [String: Any])
            var rows = try #require(modules["image_encoder"] as? [[String: Any]])
            rows[3]["file"] = path
            modules["image_encoder"] = rows
            manifest["module_outputs"] = modules
        }
        do {
            _ = try ReferenceSet.open(references)
            Issue.record("\(path) accepted")
        } catch {
            #expect(error.code == .unreadableReferences && error.exitCode == 2)
            #expect(error.message.contains(path) || error.message.contains("not a regular file"), "\(error)")
        }
        #expect(try String(contentsOfFile: folder + "/outside/x.npy", encoding: .utf8) == "secret")
    }

    @Test("A reference file that is a link out of the set, or a FIFO, is bad input and is not read")
    func referenceLinkOut() throws {
        let folder = try temporaryFolder("link-out")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let references = try ReferenceCopy.tiny(in: folder)
        let target = references + "/references/point1/onnx_iou_predictions.npy"
        try FileManager.default.moveItem(atPath: target, toPath: folder + "/outside.npy")
        try FileManager.default.createSymbolicLink(atPath: target, withDestinationPath: folder + "/outside.npy")
        let fifo = references + "/references/box/onnx_iou_predictions.npy"
        try FileManager.default.removeItem(atPath: fifo)
        #expect(mkfifo(fifo, 0o600) == 0)
        let report = try Verifier.verify(modelPath: model, referencesPath: references, options: VerifyOptions(cases: ["point1", "box"]))
        #expect(report.check("point1", "iou_predictions")?.status == .badInput)
        #expect(report.check("point1", "iou_predictions")?.problem?.contains("outside the set") == true)
        #expect(report.check("box", "iou_predictions")?.problem?.contains("not a regular file") == true)
        #expect(report.exitCode == 2)
    }

    @Test("Manifest tolerances show beside the defaults; --max-atol makes a looser set bad input")
    func manifestTolerances() throws {
        let folder = try temporaryFolder("loose")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A broken model (one encoder weight moved by 0.5) that a set asking atol 1e308 would pass.
        let model = try ModelUnderTest.perturbed(try ModelUnderTest.tiny(in: folder),
                                                 tensor: "image_encoder.layers.1.blocks.0.mlp.fc1.weight", delta: 0.5,
                                                 to: folder + "/broken.samw")
        let references = try ReferenceCopy.tiny(in: folder)
        try ReferenceCopy.editManifest(references) { $0["tolerances"] = ["atol": 1e308, "rtol": 1e-4] }
        let loose = try Verifier.verify(modelPath: model, referencesPath: references, options: VerifyOptions(cases: ["image_encoder"]))
        // The tensors pass the lowered bar, as the manifest asks; the masks the encoder's output gives do not.
        #expect(loose.check("image_encoder", "image_embeddings")?.status == .pass)
        #expect(loose.exitCode == 1 && loose.taskCounts.failedWithTensorsPassing == 1, "\(loose.problems)")
        #expect(loose.manifestTolerances.first?.looserThanDefaults == true)
        let table = TableReport.render(loose)
        #expect(table.contains("manifest tolerances: manifest: atol 1.00e+308, rtol 1.00e-04 (LOOSER than the defaults)"))
        #expect(JUnitReport.render(loose).contains("LOOSER than the defaults"))
        #expect(String(decoding: try loose.jsonData(), as: UTF8.self).contains("\"looserThanDefaults\" : true"))

        let guarded = try Verifier.verify(modelPath: model, referencesPath: references,
                                          options: VerifyOptions(cases: ["image_encoder"], maxAtol: 1e-4, maxRtol: 1e-4))
        let check = try #require(guarded.check("image_encoder", "image_embeddings"))
        #expect(check.status == .badInput)
        #expect(check.problem?.contains("atol 1.00e+308 (manifest) is more than --max-atol 1.00e-04") == true)
        #expect(guarded.exitCode == 2)
        #expect(throws: VerifyError.self) {
            try Verifier.verify(modelPath: model, referencesPath: references, options: VerifyOptions(atol: 1, maxAtol: 1e-4))
        }
    }
}
