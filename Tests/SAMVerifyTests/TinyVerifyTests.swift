import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMVerify

/// samverify on the committed tiny reference set, with the model converted from the set's own weights.
@Suite("Verify: tiny reference set")
struct TinyVerifyTests {
    @Test("the converted tiny model passes every check, and the reports say so")
    func tinyPasses() throws {
        let folder = try temporaryFolder("tiny")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let report = try Verifier.verify(modelPath: model, referencesPath: TestPaths.tinyReferences)
        print(TableReport.render(report))
        #expect(report.exitCode == 0 && report.status == "pass", "\(report.problems)")
        // image_encoder + 8 decoder cases + preprocess: 1 + 8 * 2 official + 5 * 3 split (the point-only cases)
        // + input_image (the set has the resized image and the input, no photo).
        #expect(report.cases.map(\.name) == ["image_encoder", "point1", "points2_pos_neg", "points5", "points16", "points_max",
                                             "box", "box_point", "point1_with_mask_input", "preprocess"])
        #expect(report.counts == CheckCounts(checks: 33, passed: 33, failed: 0, badInput: 0, notApplicable: 0))
        // A task-level check for the encoder (end to end) and each decoder case, none for preprocessing.
        #expect(report.taskCounts == TaskCounts(cases: 9, passed: 9))
        #expect(report.cases.allSatisfy { $0.divergence == nil })
        for (result, check) in report.checks {
            let figures = try #require(check.figures, "\(result.name)/\(check.output)")
            #expect(figures.maxAbs < 1e-5 && figures.minPassingAtol < 1e-5, "\(result.name)/\(check.output): \(figures.maxAbs)")
            #expect(check.tolerance.tolerance == Tolerance.defaults)  // the set's manifest states the defaults
            #expect(figures.worstIndex.count == check.shape?.count)
        }
        #expect(report.check("point1", "low_res_masks")?.shape == [1, 4, 32, 32])
        #expect(report.check("image_encoder", "image_embeddings")?.reference == "references/image_embeddings.npy")
        #expect(report.model.maskPath)

        // JSON round-trips; JUnit has one testcase per check and no failure.
        let json = folder + "/out/report.json", junit = folder + "/out/report.xml"
        try ReportFiles.writeJSON(report, to: json)
        try ReportFiles.writeJUnit(report, to: junit)
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let decoded = try decoder.decode(VerificationReport.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        #expect(decoded == report)
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.components(separatedBy: "<testcase ").count - 1 == 33 + 9)  // every check, every task
        #expect(xml.contains(#"tests="42" failures="0" errors="0" skipped="0""#))
        #expect(xml.contains(#"<property name="task_min_mask_iou" value="0.99"/>"#))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/out").sorted() == ["report.json", "report.xml"])
    }

    @Test("the references/ folder itself is accepted, and --case selects cases")
    func layoutAndCaseSelection() throws {
        let folder = try temporaryFolder("select")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let report = try Verifier.verify(modelPath: model, referencesPath: TestPaths.tinyReferences + "/references",
                                         options: VerifyOptions(cases: ["box", "point1"]))
        #expect(report.references.root == URL(fileURLWithPath: TestPaths.tinyReferences).standardizedFileURL.path)
        #expect(report.cases.map(\.name) == ["point1", "box"])  // the set's order
        #expect(report.exitCode == 0)
        #expect(report.cases[0].inputs.contains("references/point1/onnx_point_coords.npy"))
    }

    /// One weight of TinyViT stage 1's first block MLP (fc1, the first Linear after the MLP's LayerNorm)
    /// moved by +0.5: the encoder case fails and the walk over the dumps names `...mlp.fc1`, the first
    /// module whose output it changes (`...mlp.norm` before it is untouched). Decoder cases run on the
    /// reference embeddings, so they still pass: the decoder check is isolated from the encoder.
    @Test("an encoder weight mutation fails and names its module as the first divergence")
    func encoderMutation() throws {
        let folder = try temporaryFolder("encoder-mutation")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.perturbed(try ModelUnderTest.tiny(in: folder),
                                                 tensor: "image_encoder.layers.1.blocks.0.mlp.fc1.weight", delta: 0.5,
                                                 to: folder + "/mutated.samw")
        let report = try Verifier.verify(modelPath: model, referencesPath: TestPaths.tinyReferences)
        print(TableReport.render(report))
        #expect(report.exitCode == 1 && report.status == "fail")
        let encoder = try #require(report.cases.first)
        #expect(encoder.name == "image_encoder" && encoder.status == .fail)
        let divergence = try #require(encoder.divergence)
        #expect(divergence.located)
        #expect(divergence.module == "image_encoder.layers.1.blocks.0.mlp.fc1")
        #expect(divergence.call == 0)
        #expect(divergence.modules.first { $0.module == "image_encoder.layers.1.blocks.0.mlp.norm" }?.status == .pass)
        #expect(report.cases.dropFirst().allSatisfy { $0.status == .pass }, "\(report.problems)")
    }

    /// The same for the decoder: a value projection of the second two-way block.
    @Test("a decoder weight mutation fails and names a decoder module as the first divergence")
    func decoderMutation() throws {
        let folder = try temporaryFolder("decoder-mutation")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.perturbed(
            try ModelUnderTest.tiny(in: folder),
            tensor: "mask_decoder.transformer.layers.1.cross_attn_image_to_token.v_proj.weight", delta: 0.5,
            to: folder + "/mutated.samw")
        let report = try Verifier.verify(modelPath: model, referencesPath: TestPaths.tinyReferences)
        print(TableReport.render(report))
        #expect(report.exitCode == 1)
        #expect(report.cases.first?.status == .pass)  // the encoder is untouched
        let point1 = try #require(report.cases.first { $0.name == "point1" })
        #expect(point1.status == .fail)
        let divergence = try #require(point1.divergence)
        #expect(divergence.located)
        #expect(divergence.module == "mask_decoder.transformer.layers.1.cross_attn_image_to_token.v_proj")
        let points5 = try #require(report.cases.first { $0.name == "points5" })
        #expect(points5.status == .fail)
        #expect(points5.divergence?.located == false)
        #expect(points5.divergence?.note.contains("no per-module dumps for case points5") == true)
    }
}
