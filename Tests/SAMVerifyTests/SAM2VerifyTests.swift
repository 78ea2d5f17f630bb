import Foundation
import SAMConvert
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMVerify

/// samverify on the committed tiny SAM 2.1 set, with the model converted from the set's own .pt.
@Suite("Verify: tiny SAM 2.1 reference set")
struct SAM2VerifyTests {
    @Test("the converted SAM 2.1 model passes every check: features, four masks, scores, the predictor's selections")
    func passes() throws {
        let folder = try temporaryFolder("sam2")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let report = try Verifier.verify(modelPath: try TestModels.sam2Tiny(in: folder), referencesPath: TestPaths.sam2TinyReferences)
        print(TableReport.render(report))
        // 3 encoder outputs; 9 cases of 3 decoder and 2 predictor outputs.
        #expect(report.exitCode == 0 && report.counts.checks == 48 && report.counts.passed == 48, "\(report.problems)")
        let encoder = try #require(report.cases.first)
        #expect(encoder.outputs.map(\.output) == ["image_embed", "high_res_feats_0", "high_res_feats_1"])
    }

    /// One entry of Hiera's tiled window position embedding moved by +0.5: it is added right after
    /// the patch embedding, so the first dumped module that differs is the first block's norm1.
    @Test("a position-embedding mutation fails the encoder and names the first module it changes")
    func positionEmbeddingMutation() throws {
        let folder = try temporaryFolder("sam2-mutation")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let mutated = try ModelUnderTest.perturbed(try TestModels.sam2Tiny(in: folder), tensor: "image_encoder.trunk.pos_embed_window",
                                                   delta: 0.5, to: folder + "/mutated.samw")
        let report = try Verifier.verify(modelPath: mutated, referencesPath: TestPaths.sam2TinyReferences)
        #expect(report.exitCode == 1)
        let encoder = try #require(report.cases.first)
        #expect(encoder.name == "image_encoder" && encoder.status == .fail)
        let divergence = try #require(encoder.divergence)
        #expect(divergence.located && divergence.module == "image_encoder.trunk:pos_embed", "\(divergence.summary)")
        // Decoder cases run on the reference features and still pass.
        #expect(report.cases.dropFirst().allSatisfy { $0.status == .pass })
    }

    /// The bias of the decoder's object-score output moved: masks and IoU are untouched, only that
    /// output fails, and the dumps of point1's run name the head's last layer.
    @Test("an object-score head mutation fails only object_score_logits and names the head")
    func objectScoreMutation() throws {
        let folder = try temporaryFolder("sam2-object-score")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let mutated = try ModelUnderTest.perturbed(try TestModels.sam2Tiny(in: folder), tensor: "mask_decoder.pred_obj_score_head.layers.2.bias",
                                                   delta: 0.5, to: folder + "/mutated.samw")
        let report = try Verifier.verify(modelPath: mutated, referencesPath: TestPaths.sam2TinyReferences)
        #expect(report.exitCode == 1)
        let point1 = try #require(report.cases.first { $0.name == "point1" })
        #expect(point1.outputs.filter { $0.status == .fail }.map(\.output) == ["object_score_logits"])
        #expect(point1.divergence?.module == "mask_decoder.pred_obj_score_head.layers.2", "\(point1.divergence?.summary ?? "none")")
    }
}

/// The same model from samexporter's ONNX pair: every check but the object score, which that export
/// does not keep.
@Suite("Verify: SAM 2.1 from samexporter's ONNX pair")
struct SAM2ONNXVerifyTests {
    @Test("encoder.onnx + decoder.onnx convert and pass every check they can run")
    func passes() throws {
        let folder = try temporaryFolder("sam2-onnx")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var request = ConversionRequest(inputs: [TestPaths.sam2TinyReferences + "/encoder.onnx", TestPaths.sam2TinyReferences + "/decoder.onnx"],
                                        output: folder + "/onnx.samw")
        request.configFile = TestPaths.sam2TinyReferences + "/config.json"
        _ = try Converter.run(request)
        let report = try Verifier.verify(modelPath: request.output, referencesPath: TestPaths.sam2TinyReferences)
        // 3 encoder outputs; 9 cases of 2 decoder and 2 predictor outputs.
        #expect(report.exitCode == 0 && report.counts.checks == 39 && report.counts.passed == 39, "\(report.problems)")
    }
}
