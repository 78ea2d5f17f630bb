import Foundation
import SAMConvert
import SAMModelFile
import SAMPipeline
import SAMTensor
import SAMTestSupport
@testable import SAMVerify
import Testing

/// The committed tiny video set (converters/export_sam2_video.py --model tiny_video --scenario all-prompts):
/// two clicks, a box and a mask prompt (an object first prompted on frame 2), a correction in a second
/// round, holes filled, objects absent on frame 1. Tracked natively and compared with SAM2VideoPredictor.
@Suite("Verify: the tiny video set")
struct VideoSetTests {
    static let set = TestPaths.sam2TinyVideoReferences

    static func convert(_ weights: String, folder: String) throws -> String {
        let name = (weights as NSString).lastPathComponent
        var request = ConversionRequest(inputs: [weights], output: folder + "/\(name).samw")
        request.configFile = set + "/config.json"
        _ = try Converter.run(request)
        return request.output
    }

    /// The same scenario tracked in reverse from the last frame (--reverse --start-frame 7, seed 1).
    static let reverseSet = TestPaths.sam2TinyVideoReferences + "_reverse"

    @Test("every frame's logits within 1e-4 of upstream's, masks identical, modules within tolerance",
          arguments: [set, reverseSet])
    func tracksAsUpstream(set: String) throws {
        let folder = try TestPaths.temporaryFolder("video-set")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var request = ConversionRequest(inputs: [set + "/checkpoint.pt"], output: folder + "/video.samw")
        request.configFile = set + "/config.json"
        _ = try Converter.run(request)
        let model = try ModelFile.load(request.output)
        #expect(model.metadata.components.contains("video") && model.metadata.schemaVersion == 4)
        let reference = try VideoReferenceSet(folder: set)
        #expect(reference.fillHoles && reference.prompts.contains { $0.round == 1 } && reference.prompts.contains { $0.maskFile != nil })
        let result = try VideoVerification.run(model, set: reference, progress: { _ in })
        #expect(result.passed, "\(result.table)")
        #expect(result.frames.count == 8 && result.frames.first?.stem == (reference.reverse ? "00007" : "00000"))
        // Measured 2e-6 to 5e-6 on each frame (AVX-512 and AVX2 paths): 1e-4 leaves room for BLAS kernels, not for a wrong step.
        #expect(result.frames.allSatisfy { $0.maxLogitError < 1e-4 && $0.minimumIoU == 1 && $0.maxScoreError < 1e-4 }, "\(result.table)")
        // The memory path was compared where upstream dumped it, on every frame.
        let names = Set(result.modules.map(\.name))
        #expect(names.isSuperset(of: ["vision_features", "pix_feat_with_mem", "obj_ptr", "maskmem_features", "preflight_maskmem_features"]))
    }

    @Test("with tolerances no port meets, the report fails and names the first diverging frame")
    func namesTheDivergence() throws {
        let folder = try TestPaths.temporaryFolder("video-set-broken")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelFile.load(try Self.convert(Self.set + "/checkpoint.pt", folder: folder))
        let reference = try VideoReferenceSet(folder: Self.set)
        var tolerances = VideoVerification.Tolerances()
        tolerances.logits = 1e-9  // as strict as a drifted port would meet
        tolerances.moduleAbsolute = 0
        tolerances.moduleRelative = 0
        let result = try VideoVerification.run(model, set: reference, tolerances: tolerances, progress: { _ in })
        #expect(!result.passed)
        #expect(result.table.contains("FAIL: first diverging frame 00000"), "\(result.table)")
    }

    @Test("the same weights from safetensors track to the same bits")
    func safetensors() throws {
        let folder = try TestPaths.temporaryFolder("video-set-st")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let reference = try VideoReferenceSet(folder: Self.set)
        func logits(_ weights: String) throws -> [FloatTensor] {
            let model = try ModelFile.load(try Self.convert(weights, folder: folder))
            var tracker = try VideoTracker(model: try TrackingModel(sam: model.sam), frames: SetFrames(reference: reference))
            var frames: [FloatTensor] = []
            try tracker.run(reference.prompts, masks: reference.masks) { frames.append($0.logits) }
            return frames
        }
        let fromPT = try logits(Self.set + "/checkpoint.pt"), fromSafetensors = try logits(Self.set + "/checkpoint.safetensors")
        #expect(fromPT.count == 8 && fromPT == fromSafetensors)
    }
}
