import Foundation
import SAMConvert
import SAMModel
import SAMModelFile
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMVerify

/// samverify on the committed tiny EfficientViT-SAM set (converters/export_efficientvit_sam.py: L0's
/// structure at widths 4 ... 32, a 96 input, a 192 prompt frame): the encoder's embedding and its
/// 135 per-module dumps, six decoder cases on SAM's decoder with eps 1e-6 LayerNorms, the input.
@Suite("Verify: tiny EfficientViT-SAM reference set")
struct EfficientViTSAMVerifyTests {
    static let set = TestPaths.efficientViTSAMTinyReferences

    /// The set's `files` (one checkpoint, or an encoder export and a decoder export) converted into `folder`.
    static func model(from files: String..., in folder: String) throws -> String {
        var request = ConversionRequest(inputs: files.map { set + "/" + $0 }, output: folder + "/efficientvit_sam.samw")
        request.configFile = set + "/config.json"
        _ = try Converter.run(request)
        return request.output
    }

    @Test("converted from the .pt ({\"state_dict\": ...}) or HDF5, EfficientViT-SAM passes every check of its set",
          arguments: ["efficientvit_sam.pt", "efficientvit_sam.h5"])
    func passes(file: String) throws {
        let folder = try temporaryFolder("efficientvit-sam")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try Self.model(from: file, in: folder)
        let loaded = try ModelFile.load(model)
        #expect(loaded.metadata.modelFamily == "efficientvit_sam" && loaded.metadata.config.imageEncoder.family == "efficientvit")
        let report = try Verifier.verify(modelPath: model, referencesPath: Self.set)
        // The embedding; 6 decoder cases x (2 official + 2 predictor outputs), 3 of them x 3 split outputs; the input.
        #expect(report.exitCode == 0 && report.counts.checks == 35 && report.counts.passed == 35, "\(report.problems)")
        #expect(report.taskCounts == TaskCounts(cases: 7, passed: 7))
        let encoder = try #require(report.cases.first)
        #expect(encoder.name == "image_encoder" && encoder.outputs.map(\.output) == ["image_embeddings"])
    }

    /// The set's TorchScript exports (`export_efficientvit_sam.py --onnx`): the encoder, its BatchNorms
    /// folded into the convs by the exporter, and efficientsam's SamOnnxModel decoder. The per-module
    /// walk still runs (a folded ConvLayer reports its norm's output, as the runtime's own fold does).
    @Test("converted from the ONNX encoder and official-style decoder, EfficientViT-SAM passes every check")
    func passesFromONNX() throws {
        let folder = try temporaryFolder("efficientvit-sam-onnx")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try Self.model(from: "ImageEncoder.onnx", "efficientvit_sam_decoder.onnx", in: folder)
        let report = try Verifier.verify(modelPath: model, referencesPath: Self.set)
        #expect(report.exitCode == 0 && report.counts.checks == 35 && report.counts.passed == 35, "\(report.problems)")
        #expect(report.taskCounts == TaskCounts(cases: 7, passed: 7))
    }

    /// The decoder as MIT Han Lab's deployment/onnx/export_decoder.py exports it: points only, so the
    /// model has no mask path and the one case with a mask input is not applicable; the rest pass.
    @Test("with upstream's deployment decoder export, every case without a mask input passes")
    func passesFromDeploymentDecoder() throws {
        let folder = try temporaryFolder("efficientvit-sam-deployment")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try Self.model(from: "ImageEncoder.onnx", "efficientvit_sam_decoder_deployment.onnx", in: folder)
        let report = try Verifier.verify(modelPath: model, referencesPath: Self.set)
        #expect(report.exitCode == 0 && report.counts.checks == 35 && report.counts.passed == 31 && report.counts.notApplicable == 4,
                "\(report.problems)")
        #expect(report.taskCounts == TaskCounts(cases: 7, passed: 6, notApplicable: 1))
        let withMask = try #require(report.cases.first { $0.name == "point1_with_mask_input" })
        #expect(withMask.outputs.allSatisfy { $0.status == .notApplicable })
    }

    /// One weight of the first attention block's multi-scale aggregation moved: the embedding fails, and
    /// the walk over the 135 dumps names the grouped 1x1 conv, with every module before it passing.
    @Test("a weight mutation in LiteMLA fails the encoder and names the aggregation conv as the first diverging module")
    func liteMLAMutation() throws {
        let folder = try temporaryFolder("efficientvit-sam-mutation")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try Self.model(from: "efficientvit_sam.pt", in: folder)
        let module = "image_encoder.backbone.stages.4.op_list.1.context_module.main.aggreg.0.1"
        let mutated = try ModelUnderTest.perturbed(model, tensor: module + ".weight", delta: 0.5, to: folder + "/mutated.samw")
        let report = try Verifier.verify(modelPath: mutated, referencesPath: Self.set)
        #expect(report.exitCode == 1)
        let encoder = try #require(report.cases.first)
        #expect(encoder.name == "image_encoder" && encoder.status == .fail)
        let divergence = try #require(encoder.divergence)
        #expect(divergence.located && divergence.module == module, "\(divergence.summary)")
        // Every dump before it in the manifest's order (79 rows: stages 0-3, stage 4's downsample, qkv, aggreg.0.0) passes.
        #expect(divergence.modulesPassingBefore == 79 && divergence.notReported.isEmpty, "\(divergence.note)")
        // The decoder cases run on the reference embeddings: untouched.
        #expect(report.cases.filter { $0.kind == .decoder }.allSatisfy { $0.status == .pass })
    }
}
