import Foundation
import SAMConvert
import SAMModelFile
import SAMPipeline
import SAMTensor
import SAMTestSupport
@testable import SAMVerify
import Testing

/// The tiny video set tracked with the model converted from its transformers `Sam2VideoModel`
/// checkpoint (Tests/SAMImportTests/Fixtures/hf_sam2_video_tiny, made from the set's checkpoint.pt by
/// transformers' own conversion code): it passes the set as the `.pt`'s model does, frame for frame.
@Suite("Verify: the tiny video set from a transformers checkpoint")
struct HuggingFaceVideoSetTests {
    static let set = TestPaths.sam2TinyVideoReferences
    static let folder = TestPaths.packageRoot + "/Tests/SAMImportTests/Fixtures/hf_sam2_video_tiny"

    @Test("samverify passes the set, and every frame's logits equal the .pt model's bit for bit")
    func tracksAsUpstream() throws {
        let output = try TestPaths.temporaryFolder("hf-video-set")
        defer { try? FileManager.default.removeItem(atPath: output) }
        // The folder as users have it: model.safetensors and its own config.json, no --config.
        _ = try Converter.run(ConversionRequest(inputs: [Self.folder], output: output + "/hf.samw"))
        let model = try ModelFile.load(output + "/hf.samw")
        #expect(model.metadata.components.contains("video") && model.metadata.schemaVersion == 4)
        let reference = try VideoReferenceSet(folder: Self.set)
        let result = try VideoVerification.run(model, set: reference, progress: { _ in })
        #expect(result.passed, "\(result.table)")
        #expect(result.frames.count == 8)
        #expect(result.frames.allSatisfy { $0.maxLogitError < 1e-4 && $0.minimumIoU == 1 && $0.maxScoreError < 1e-4 }, "\(result.table)")

        var request = ConversionRequest(inputs: [Self.set + "/checkpoint.pt"], output: output + "/pt.samw")
        request.configFile = Self.set + "/config.json"
        _ = try Converter.run(request)
        func logits(_ path: String) throws -> [FloatTensor] {
            let loaded = try ModelFile.load(path)
            var tracker = try VideoTracker(model: try TrackingModel(sam: loaded.sam), frames: SetFrames(reference: reference))
            var frames: [FloatTensor] = []
            try tracker.run(reference.prompts, masks: reference.masks) { frames.append($0.logits) }
            return frames
        }
        let fromTransformers = try logits(output + "/hf.samw"), fromUpstream = try logits(output + "/pt.samw")
        #expect(fromTransformers.count == 8 && fromTransformers == fromUpstream)
    }
}
