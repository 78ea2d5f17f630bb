import Foundation
import SAMImage
import SAMImageFiles
import SAMTestSupport
import Testing
@testable import SAMVideoFiles

/// Video files decode to exactly the pixels the ffmpeg command line gives (`-pix_fmt rgb24`, the
/// committed expected PNGs), whatever order the frames are asked in.
@Suite("VideoFile: decoding")
struct VideoFileDecodingTests {
    static let fixtures = TestPaths.videoFileFixtures

    init() { FFmpegLog.silence() }

    /// The CLI's frames for `name` (expected_<name>/00000.png ...).
    static func expected(_ name: String) throws -> [RGBImage] {
        try (0..<8).map { try ImageIO.read(fixtures + "/expected_\(name)/" + String(format: "%05d.png", $0)) }
    }

    @Test("every frame equals ffmpeg's rgb24 output: H.264/MP4, MPEG-4/AVI, full-range VP9/WebM, raw H.264",
          arguments: [("tiny_h264.mp4", "tiny_h264", "h264"), ("tiny_mpeg4.avi", "tiny_mpeg4", "mpeg4"),
                      ("tiny_vp9_fullrange.webm", "tiny_vp9_fullrange", "vp9"), ("tiny_h264_raw.h264", "tiny_h264", "h264")])
    func matchesTheCommandLine(file: String, expectedName: String, codec: String) throws {
        let video = try VideoFile(Self.fixtures + "/" + file)
        let expected = try Self.expected(expectedName)
        #expect(video.frameCount == 8)
        #expect(video.frameSize == ImageSize(height: 48, width: 64))
        #expect(video.codecName == codec)
        for position in 0..<8 {
            #expect(try video.frame(at: position) == expected[position], "\(file) frame \(position)")
        }
    }

    @Test("random and reverse order give the sequential pixels; seeks land on keyframes where timestamps allow",
          arguments: [("tiny_h264.mp4", "tiny_h264", true), ("tiny_mpeg4.avi", "tiny_mpeg4", true),
                      ("tiny_vp9_fullrange.webm", "tiny_vp9_fullrange", true), ("tiny_h264_raw.h264", "tiny_h264", false)])
    func randomOrder(file: String, expectedName: String, seekable: Bool) throws {
        let expected = try Self.expected(expectedName)
        // One frame cached, so every step back decodes again.
        let video = try VideoFile(Self.fixtures + "/" + file, cacheBytes: 1)
        for position in [5, 2, 7] + (0..<8).reversed() + [3, 3, 4] {
            #expect(try video.frame(at: position) == expected[position], "\(file) frame \(position)")
        }
        if seekable {
            #expect(video.seeks > 0, "\(file): no seek held; every request decoded from the first frame")
        } else {
            #expect(video.seeks == 0)
        }
    }

    @Test("frames read in order decode each frame once, from one decoder")
    func sequential() throws {
        let video = try VideoFile(Self.fixtures + "/tiny_h264.mp4", cacheBytes: 1)
        for position in 0..<8 { _ = try video.frame(at: position) }
        _ = try video.frame(at: 7)
        #expect(video.rewinds == 1 && video.seeks == 0)
    }

    @Test("stems: positions zero-padded to at least 5 digits, wider for longer clips")
    func stems() throws {
        #expect(VideoFile.stem(position: 3, frameCount: 8) == "00003")
        #expect(VideoFile.stem(position: 12, frameCount: 123_456) == "000012")
        #expect(try VideoFile(Self.fixtures + "/tiny_h264.mp4").stems == (0..<8).map { String(format: "%05d", $0) })
    }
}
