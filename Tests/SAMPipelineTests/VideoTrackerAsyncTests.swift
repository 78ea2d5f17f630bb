import Foundation
import SAMConvert
import SAMImage
import SAMImageFiles
import SAMModelFile
@testable import SAMPipeline
import SAMTestSupport
import Testing

/// The tracker as an app uses it: frames in memory, results as an async sequence, cancellable.
@Suite("Pipeline: video tracking as an async sequence")
struct VideoTrackerAsyncTests {
    static let set = TestPaths.sam2TinyVideoReferences

    static func tracker(in folder: String) throws -> (VideoTracker, [TrackPrompt], [Int: [UInt8]]) {
        var request = ConversionRequest(inputs: [set + "/checkpoint.pt"], output: folder + "/video.samw")
        request.configFile = set + "/config.json"
        _ = try Converter.run(request)
        let model = try ModelFile.load(request.output)
        let names = try FileManager.default.contentsOfDirectory(atPath: set + "/frames").sorted()
        let frames = try InMemoryFrames(try names.map { try ImageIO.read(set + "/frames/" + $0) })
        let promptsFile = set + "/prompts.json"
        let prompts = try TrackPromptFile.read(promptsFile, frameCount: frames.frameCount, frameSize: frames.frameSize)
        var masks: [Int: [UInt8]] = [:]
        for (entry, prompt) in prompts.enumerated() {
            guard let file = prompt.maskFile else { continue }
            masks[entry] = TrackPromptFile.mask(try ImageIO.read(TrackPromptFile.maskPath(file, promptsFile: promptsFile)))
        }
        return (try VideoTracker(model: try TrackingModel(sam: model.sam), frames: frames), prompts, masks)
    }

    @Test("the stream yields the frames run() gives, in order, bit for bit")
    func streamMatchesRun() async throws {
        let folder = try TestPaths.temporaryFolder("video-async")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (tracker, prompts, masks) = try Self.tracker(in: folder)
        var synchronous = tracker, expected: [TrackedFrame] = []
        try synchronous.run(prompts, masks: masks) { expected.append($0) }
        var streamed: [TrackedFrame] = []
        let frames = tracker.frames(prompts, masks: masks)
        for try await frame in frames { streamed.append(frame) }
        #expect(frames.end.hasEnded, "the tracking thread runs on after the last frame")
        #expect(streamed.map(\.frameIndex) == Array(0..<8) && streamed.map(\.frameIndex) == expected.map(\.frameIndex))
        #expect(streamed.map(\.logits) == expected.map(\.logits) && streamed.map(\.objectScores) == expected.map(\.objectScores))
        #expect(streamed[1].objectIDs == [1, 2, 3])
    }

    @Test("cancelling the consumer ends the stream early (tracking stops)")
    func cancellation() async throws {
        let folder = try TestPaths.temporaryFolder("video-cancel")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (tracker, prompts, masks) = try Self.tracker(in: folder)
        let frames = tracker.frames(prompts, masks: masks)
        let consumer = Task { () -> (Int, (any Error)?) in
            var count = 0
            let started = Date()
            do {
                for try await _ in frames {
                    count += 1
                    if count == 1 {
                        // A slow consumer: the producer makes the next frames meanwhile (the first frame
                        // took longer than any later one), one into the buffer and one waiting for room.
                        usleep(UInt32(min(20, 0.1 + 2 * Date().timeIntervalSince(started)) * 1e6))
                    }
                    if count == 2 {
                        // Taking frame 2 made room: frame 3 is in the buffer within milliseconds. A
                        // cancelled consumer must not be handed it.
                        withUnsafeCurrentTask { $0?.cancel() }
                        usleep(100_000)
                    }
                }
            } catch {
                return (count, error)
            }
            return (count, nil)
        }
        let (count, error) = await consumer.value
        // Tracking runs at most one frame ahead of the consumer, and a cancelled consumer takes no more.
        #expect(count == 2, "\(count) frames")
        // A cancelled consumer's iteration ends with CancellationError, and only once tracking has stopped:
        // an app may exit at once (OpenBLAS tears its kernel table down at exit, under any product still running).
        #expect(error is CancellationError, "\(String(describing: error))")
        #expect(frames.end.hasEnded, "the tracking thread runs on after the cancelled loop ended")
    }
}
