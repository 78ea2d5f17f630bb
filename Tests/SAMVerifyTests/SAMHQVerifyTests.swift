import Foundation
import SAMConvert
import SAMModel
import SAMModelFile
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMVerify

/// samverify on the committed tiny SAM-HQ sets (converters/export_sam_hq.py, segment-anything-hq's
/// predictor): one point, three points, a box, box and point, each with multimask output on and off
/// and hq_token_only on and off; the model converted from the set's own checkpoint.
@Suite("Verify: tiny SAM-HQ reference sets")
struct SAMHQVerifyTests {
    static let sets = [TestPaths.samHQViTTinyReferences, TestPaths.samHQTinyViTTinyReferences]

    static func model(_ set: String, from file: String, in folder: String) throws -> String {
        var request = ConversionRequest(inputs: [set + "/" + file], output: folder + "/hq.samw")
        request.configFile = set + "/config.json"
        _ = try Converter.run(request)
        return request.output
    }

    @Test("converted from the released .pth layout or HDF5, SAM-HQ passes every check of its set",
          arguments: sets, ["sam_hq.pth", "sam_hq.h5"])
    func passes(set: String, file: String) throws {
        let folder = try temporaryFolder("sam-hq")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try Self.model(set, from: file, in: folder)
        let loaded = try ModelFile.load(model)
        #expect(loaded.metadata.modelFamily == "sam_hq" && loaded.metadata.schemaVersion == 3)
        let report = try Verifier.verify(modelPath: model, referencesPath: set)
        // 16 decoder cases x (4 official + 2 predictor), the encoder's embedding and early features, preprocessing.
        #expect(report.exitCode == 0 && report.counts.checks == 67 && report.counts.passed == 67, "\(report.problems)")
        #expect(report.taskCounts == TaskCounts(cases: 17, passed: 17))
        let encoder = try #require(report.cases.first)
        #expect(encoder.outputs.map(\.output) == ["image_embeddings", "vit_features"])
        // The predictor's outputs of every case were compared: hq_token_only was read from the case.
        for result in report.cases where result.kind == .decoder {
            #expect(result.inputs.contains { $0.hasSuffix("/hq_token_only.npy") }, "\(result.name)")
            #expect(result.outputs.contains { $0.output == "predictor_low_res_masks" && $0.status == .pass }, "\(result.name)")
        }
    }

    /// The tiny ViT set's weights saved by transformers' SamHQModel (converters/export_hf_sam_hq.py):
    /// SAM's names by SAM's rules, the HQ modules' by HuggingFaceSamHQNames.
    @Test("converted from a transformers SamHQModel checkpoint, SAM-HQ passes every check")
    func passesFromTransformers() throws {
        let folder = try temporaryFolder("sam-hq-hf")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fixture = TestPaths.packageRoot + "/Tests/SAMImportTests/Fixtures/hf_sam_hq_vit_tiny.safetensors"
        var request = ConversionRequest(inputs: [fixture], output: folder + "/hq.samw")
        request.configFile = TestPaths.samHQViTTinyReferences + "/config.json"
        _ = try Converter.run(request)
        let report = try Verifier.verify(modelPath: request.output, referencesPath: TestPaths.samHQViTTinyReferences)
        #expect(report.exitCode == 0 && report.counts.checks == 67 && report.counts.passed == 67, "\(report.problems)")
        // Without a config, the renamed weights are still told from SAM's.
        var bare = ConversionRequest(inputs: [fixture], output: folder + "/bare.samw")
        bare.maxPoints = 100
        _ = try Converter.run(bare)
        #expect(try ModelFile.load(bare.output).metadata.modelFamily == "sam_hq")
    }

    /// The set's TorchScript exports (`export_sam_hq_onnx.py`): the encoder with its early features and
    /// SysCV sam-hq's official decoder export (`SamOnnxModel`, `interm_embeddings` input).
    @Test("converted from the ONNX encoder and the official HQ decoder export, SAM-HQ passes every check")
    func passesFromONNX() throws {
        let folder = try temporaryFolder("sam-hq-onnx")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let set = TestPaths.samHQViTTinyReferences
        var request = ConversionRequest(inputs: [set + "/ImageEncoder.onnx", set + "/sam_hq_decoder.onnx"], output: folder + "/hq.samw")
        request.configFile = set + "/config.json"
        _ = try Converter.run(request)
        #expect(try ModelFile.load(request.output).metadata.modelFamily == "sam_hq")
        let report = try Verifier.verify(modelPath: request.output, referencesPath: set)
        #expect(report.exitCode == 0 && report.counts.checks == 67 && report.counts.passed == 67, "\(report.problems)")
        #expect(report.taskCounts == TaskCounts(cases: 17, passed: 17))
    }

    /// One weight of the HQ-only `compress_vit_feat` moved: SAM's four masks and the scores stay, the
    /// HQ mask moves, and the walk names the first module whose output differs.
    @Test("an HQ-only weight mutation fails the decoder cases and names compress_vit_feat")
    func hqMutation() throws {
        let folder = try temporaryFolder("sam-hq-mutation")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try Self.model(TestPaths.samHQViTTinyReferences, from: "sam_hq.pth", in: folder)
        let mutated = try ModelUnderTest.perturbed(model, tensor: "mask_decoder.compress_vit_feat.0.weight", delta: 0.5,
                                                   to: folder + "/mutated.samw")
        let report = try Verifier.verify(modelPath: mutated, referencesPath: TestPaths.samHQViTTinyReferences)
        #expect(report.exitCode == 1)
        let point1 = try #require(report.cases.first { $0.name == "point1" })
        #expect(point1.status == .fail)
        #expect(point1.outputs.first { $0.output == "iou_predictions" }?.status == .pass)
        let divergence = try #require(point1.divergence)
        #expect(divergence.located && divergence.module == "mask_decoder.compress_vit_feat.0", "\(divergence)")
        #expect(report.cases.first?.status == .pass)  // the encoder is untouched
    }
}
