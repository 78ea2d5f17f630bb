import Foundation
import SAMTestSupport
import Testing

/// samtrack on a video file: the same outputs, bit for bit, as on a folder of the frames the video
/// decodes to; a bad video is exit 2 naming the file, with nothing written.
@Suite("Pipeline: samtrack on a video file")
struct SamTrackVideoFileTests {
    static let video = TestPaths.videoFileFixtures + "/tiny_h264.mp4"
    /// The MP4's frames as the ffmpeg command line decodes them, as PNGs 00000.png ... 00007.png.
    static let decodedFrames = TestPaths.videoFileFixtures + "/expected_tiny_h264"

    @Test("an MP4 and a folder of its decoded frames give identical masks, logits, overlays and results")
    func videoEqualsFolder() throws {
        let (folder, model, _, prompts) = try SamTrackCommandLineTests.workspace("samtrack-video")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fromVideo = try samtrackTool.run([model, Self.video, "--prompts", prompts, "--out", folder + "/video"])
        #expect(fromVideo.status == 0, "\(fromVideo.stderr)")
        #expect(fromVideo.stderr.contains("frame 00007 (8 of 8)"))
        let fromFolder = try samtrackTool.run([model, Self.decodedFrames, "--prompts", prompts, "--out", folder + "/folder"])
        #expect(fromFolder.status == 0, "\(fromFolder.stderr)")
        let manager = FileManager.default
        let files = try manager.subpathsOfDirectory(atPath: folder + "/folder").sorted()
        #expect(try manager.subpathsOfDirectory(atPath: folder + "/video").sorted() == files)
        #expect(files.contains("logits/00007.npy") && files.contains("masks/00003/object_2.png"))
        for file in files where !file.hasSuffix("result.json") {
            var isFolder: ObjCBool = false
            guard manager.fileExists(atPath: folder + "/folder/" + file, isDirectory: &isFolder), !isFolder.boolValue else { continue }
            #expect(manager.contentsEqual(atPath: folder + "/video/" + file, andPath: folder + "/folder/" + file), "\(file) differs")
        }
        let results = try ["video", "folder"].map { name in
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/\(name)/result.json"))) as? [String: Any]
        }
        #expect((results[0]?["frames"] as? NSArray) == (results[1]?["frames"] as? NSArray))
    }

    @Test("a cut-off video, random bytes and a FIFO: exit 2 naming the file, nothing written")
    func badVideos() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.video))
        try SamTrackCommandLineTests.refuses(nil, message: "truncated", frames: { folder in
            let path = folder + "/cut.mp4"
            try bytes.prefix(bytes.count * 3 / 4).write(to: URL(fileURLWithPath: path))
            return path
        })
        try SamTrackCommandLineTests.refuses(nil, message: "noise.mp4", frames: { folder in
            let path = folder + "/noise.mp4"
            var generator = SplitMix64(seed: 3)
            try Data((0..<2048).map { _ in UInt8(truncatingIfNeeded: generator.next()) }).write(to: URL(fileURLWithPath: path))
            return path
        })
        try SamTrackCommandLineTests.refuses(nil, message: "pipe.mp4", frames: { folder in
            let path = folder + "/pipe.mp4"
            #expect(mkfifo(path, 0o600) == 0)
            return path
        })
    }
}
