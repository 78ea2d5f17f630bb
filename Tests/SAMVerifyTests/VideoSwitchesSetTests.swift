import Foundation
import SAMConvert
import SAMModelFile
import SAMPipeline
import SAMTestSupport
@testable import SAMVerify
import Testing

/// The tiny video scenario tracked by upstream with `add_all_frames_to_correct_as_cond=True` and
/// `non_overlap_masks=True` (converters/export_sam2_video.py --corrections-as-conditioning
/// --non-overlap-masks): the correction on frame 4 becomes a conditioning frame, and at every pixel of
/// the output only the highest-scoring of the three objects keeps its logit.
@Suite("Verify: the tiny video set with the predictor's switches on")
struct VideoSwitchesSetTests {
    static let set = TestPaths.sam2TinyVideoSwitchesReferences

    /// The set copied with `edits` applied to its reference.json, converted, and verified.
    static func verify(editing edits: [String: Bool] = [:]) throws -> (VideoReferenceSet, VideoVerification) {
        let folder = try TestPaths.temporaryFolder("video-switches")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var root = Self.set
        if !edits.isEmpty {
            root = folder + "/set"
            try FileManager.default.copyItem(atPath: Self.set, toPath: root)
            let url = URL(fileURLWithPath: root + "/reference.json")
            var record = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
            for (key, value) in edits { record[key] = value }
            try JSONSerialization.data(withJSONObject: record).write(to: url)
        }
        var request = ConversionRequest(inputs: [root + "/checkpoint.pt"], output: folder + "/video.samw")
        request.configFile = root + "/config.json"
        _ = try Converter.run(request)
        let reference = try VideoReferenceSet(folder: root)
        return (reference, try VideoVerification.run(try ModelFile.load(request.output), set: reference, progress: { _ in }))
    }

    @Test("every frame within 1e-4 of upstream's, masks identical, with both switches read from the set")
    func tracksAsUpstream() throws {
        let (reference, result) = try Self.verify()
        #expect(reference.correctionsAsConditioning && reference.nonOverlappingMasks)
        #expect(result.passed, "\(result.table)")
        #expect(result.frames.count == 8)
        #expect(result.frames.allSatisfy { $0.maxLogitError < 1e-4 && $0.minimumIoU == 1 && $0.maxScoreError < 1e-4 }, "\(result.table)")
    }

    @Test("each switch matters: verified with either one off, the run fails", arguments: ["non_overlap_masks", "add_all_frames_to_correct_as_cond"])
    func eachSwitchMatters(key: String) throws {
        let (reference, result) = try Self.verify(editing: [key: false])
        #expect(reference.correctionsAsConditioning != reference.nonOverlappingMasks)
        #expect(!result.passed, "\(key) off still passes: the set does not exercise it")
    }

    @Test("a model config with a switch this runtime lacks is refused, naming it")
    func unsupportedSwitchesRefused() throws {
        let folder = try TestPaths.temporaryFolder("video-switches-refused")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for key in ["non_overlap_masks_for_mem_enc", "clear_non_cond_mem_around_input"] {
            let url = URL(fileURLWithPath: Self.set + "/config.json")
            var config = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
            var video = try #require(config["video"] as? [String: Any])
            video[key] = true
            config["video"] = video
            let edited = folder + "/\(key).json"
            try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: edited))
            var request = ConversionRequest(inputs: [Self.set + "/checkpoint.pt"], output: folder + "/\(key).samw")
            request.configFile = edited
            do {
                _ = try Converter.run(request)
                Issue.record("converted with \(key)=true")
            } catch {
                #expect("\(error)".contains("\(key)=true is not supported"), "\(error)")
                #expect(!FileManager.default.fileExists(atPath: request.output))
            }
        }
    }
}
