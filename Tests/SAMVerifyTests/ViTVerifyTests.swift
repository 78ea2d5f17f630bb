import Foundation
import SAMConvert
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMVerify

/// samverify on the committed tiny SAM ViT set, with the model converted from the set's own sam.h5.
@Suite("Verify: tiny ViT reference set")
struct ViTVerifyTests {
    static func model(in folder: String) throws -> String {
        var request = ConversionRequest(inputs: [TestPaths.vitTinyReferences + "/sam.h5"], output: folder + "/vit.samw")
        request.configFile = TestPaths.vitTinyReferences + "/config.json"
        _ = try Converter.run(request)
        return request.output
    }

    static func model(from inputs: [String], in folder: String) throws -> String {
        var request = ConversionRequest(inputs: inputs, output: folder + "/vit.samw")
        request.configFile = TestPaths.vitTinyReferences + "/config.json"
        _ = try Converter.run(request)
        return request.output
    }

    static let importFixtures = TestPaths.packageRoot + "/Tests/SAMImportTests/Fixtures"

    @Test("the converted ViT passes every check of its set")
    func passes() throws {
        let folder = try temporaryFolder("vit")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let report = try Verifier.verify(modelPath: try Self.model(in: folder), referencesPath: TestPaths.vitTinyReferences)
        print(TableReport.render(report))
        #expect(report.exitCode == 0 && report.counts.checks == 33 && report.counts.passed == 33, "\(report.problems)")
        // Every case but preprocessing reports mask IoU and best-mask agreement.
        #expect(report.taskCounts == TaskCounts(cases: 9, passed: 9))
        for result in report.cases where result.kind != .preprocess {
            let task = try #require(result.task, "\(result.name)")
            #expect(task.minMaskIoU != nil && task.bestMaskDisagreements == 0, "\(result.name): \(task.summary)")
        }
    }

    /// The same weights saved by transformers' SamModel (converters/export_hf_sam.py), and the
    /// encoder exported by samexporter with in-graph preprocessing beside the set's official decoder.
    @Test("converted from a transformers checkpoint or a samexporter encoder, the ViT passes every check",
          arguments: [["hf_vit_tiny.safetensors"], ["samexporter_vit_tiny.onnx", "../../../reference_outputs/vit_tiny/sam_decoder.onnx"]])
    func passesFromOtherExports(inputs: [String]) throws {
        let folder = try temporaryFolder("vit-exports")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try Self.model(from: inputs.map { Self.importFixtures + "/" + $0 }, in: folder)
        let report = try Verifier.verify(modelPath: model, referencesPath: TestPaths.vitTinyReferences)
        #expect(report.exitCode == 0 && report.counts.checks == 33 && report.counts.passed == 33, "\(report.problems)")
    }

    /// One entry of block 1's `rel_pos_h` (a global block) moved by +0.5: only the attention
    /// scores change, so the first module whose output differs is that block's `attn.proj` (the
    /// projection runs on the attended values, before the `attn` module itself returns).
    @Test("a relative-position mutation fails the encoder and names the first module it changes")
    func relativePositionMutation() throws {
        let folder = try temporaryFolder("vit-mutation")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let mutated = try ModelUnderTest.perturbed(try Self.model(in: folder), tensor: "image_encoder.blocks.1.attn.rel_pos_h",
                                                   delta: 0.5, to: folder + "/mutated.samw")
        let report = try Verifier.verify(modelPath: mutated, referencesPath: TestPaths.vitTinyReferences)
        #expect(report.exitCode == 1)
        let encoder = try #require(report.cases.first)
        #expect(encoder.name == "image_encoder" && encoder.status == .fail)
        let divergence = try #require(encoder.divergence)
        #expect(divergence.located && divergence.module == "image_encoder.blocks.1.attn.proj", "\(divergence)")
        #expect(report.cases.dropFirst().allSatisfy { $0.status == .pass })
    }
}
