import Foundation
import SAMImageFiles
import SAMTestSupport
import Testing
@testable import SAMVideoFiles

/// Files that are not videos, cut-off or damaged ones, and frames over the limits: a typed error
/// naming the file (and the frame where one is at fault), never a crash or a hang.
@Suite("VideoFile: bad input")
struct VideoFileErrorTests {
    static let fixtures = TestPaths.videoFileFixtures

    init() { FFmpegLog.silence() }

    /// The error opening `path` throws, checked to name it and to come quickly.
    static func failure(_ path: String, limits: ImageLimits = .default) -> VideoFileError? {
        let started = Date()
        defer { #expect(Date().timeIntervalSince(started) < 10, "\(path) took too long") }
        do throws(VideoFileError) {
            let video = try VideoFile(path, limits: limits)
            for position in 0..<video.frameCount { _ = try video.frame(at: position) }
        } catch {
            #expect(error.file == path && error.description.hasPrefix(path), "\(error)")
            return error
        }
        return nil
    }

    static func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let path = try TestPaths.temporaryFolder("video") + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("cut-off files: MP4 and AVI are refused ('truncated' within their frame data); WebM keeps the frames before the cut")
    func truncated() throws {
        for (name, expectedName) in [("tiny_h264.mp4", "tiny_h264"), ("tiny_mpeg4.avi", "tiny_mpeg4"), ("tiny_vp9_fullrange.webm", "tiny_vp9_fullrange")] {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.fixtures + "/" + name)))
            for fraction in [0.05, 0.3, 0.6, 0.9] {
                let path = try Self.write(Array(bytes.prefix(Int(Double(bytes.count) * fraction))), name)
                if name.hasSuffix(".webm"), let video = try? VideoFile(path) {
                    // Matroska's demuxer ends a file cut between frames as if it ended there: what
                    // decodes must still be exactly the frames before the cut.
                    let expected = try VideoFileDecodingTests.expected(expectedName)
                    #expect(video.frameCount < 8)
                    for position in 0..<video.frameCount { #expect(try video.frame(at: position) == expected[position]) }
                    continue
                }
                let error = Self.failure(path)
                #expect(error != nil, "\(name) cut at \(fraction) opened")
                if fraction >= 0.6, !name.hasSuffix(".webm") {
                    #expect(error?.code == .truncated, "\(error.map(String.init(describing:)) ?? "")")
                }
            }
        }
        let cut = try Self.write(Array([UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.fixtures + "/tiny_h264.mp4"))).dropLast()), "last.mp4")
        #expect(Self.failure(cut)?.code == .truncated)
    }

    @Test("an empty file, random bytes, an audio-only file are not videos")
    func notVideos() throws {
        #expect(Self.failure(try Self.write([], "empty.mp4"))?.code == .notAVideo)
        var generator = SplitMix64(seed: 7)
        let noise = (0..<4096).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let random = Self.failure(try Self.write(noise, "noise.mp4"))
        #expect(random.map { [.notAVideo, .noVideoStream, .undecodable].contains($0.code) } == true, "\(random.map(String.init(describing:)) ?? "")")
        #expect(Self.failure(Self.fixtures + "/audio_only.wav")?.code == .noVideoStream)
    }

    @Test("a folder, a FIFO and a missing path are refused before libavformat opens them")
    func notFiles() throws {
        let folder = try TestPaths.temporaryFolder("video-folder")
        #expect(Self.failure(folder)?.code == .notAFile)
        let fifo = folder + "/pipe.mp4"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(Self.failure(fifo)?.code == .notAFile)
        #expect(Self.failure(folder + "/missing.mp4")?.code == .unreadable)
    }

    @Test("a concat list or an HLS playlist naming a video beside it is refused: nothing but the given file is read")
    func noOtherFiles() throws {
        let folder = try TestPaths.temporaryFolder("video-lists")
        try FileManager.default.copyItem(atPath: Self.fixtures + "/tiny_h264.mp4", toPath: folder + "/clip.mp4")
        try "ffconcat version 1.0\nfile clip.mp4\n".write(toFile: folder + "/list.ffconcat", atomically: true, encoding: .utf8)
        try "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nclip.mp4\n#EXT-X-ENDLIST\n"
            .write(toFile: folder + "/list.m3u8", atomically: true, encoding: .utf8)
        for list in ["list.ffconcat", "list.m3u8"] {
            let error = Self.failure(folder + "/" + list)
            #expect(error != nil, "\(list) opened the video it names")
        }
    }

    @Test("a frame of another size mid-stream names its position")
    func sizeChange() throws {
        let error = Self.failure(Self.fixtures + "/size_change.h264")
        #expect(error?.code == .sizeMismatch && error?.frame == 4, "\(error.map(String.init(describing:)) ?? "")")
        #expect(error?.description.contains("frame 4") == true)
    }

    @Test("frames over ImageLimits are refused from the stream's header; positions outside the clip are refused")
    func limits() throws {
        #expect(Self.failure(Self.fixtures + "/tiny_h264.mp4", limits: ImageLimits(maxPixels: 64 * 48 - 1))?.code == .overLimit)
        let video = try VideoFile(Self.fixtures + "/tiny_h264.mp4", limits: ImageLimits(maxPixels: 64 * 48))
        #expect(throws: VideoFileError.self) { try video.frame(at: 8) }
        #expect(throws: VideoFileError.self) { try video.frame(at: -1) }
    }

    @Test("damaged frame data: bytes flipped inside the MP4's frames are refused or decode, never crash")
    func damaged() throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.fixtures + "/tiny_h264.mp4")))
        var generator = SplitMix64(seed: 11)
        for round in 0..<20 {
            var damaged = bytes
            for _ in 0..<8 {
                let at = bytes.count / 4 + Int(generator.next() % UInt64(bytes.count * 3 / 4))
                damaged[at] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
            }
            let path = try Self.write(damaged, "damaged-\(round).mp4")
            let started = Date()
            do throws(VideoFileError) {
                let video = try VideoFile(path)
                for position in (0..<video.frameCount).reversed() { _ = try video.frame(at: position) }
            } catch {
                #expect(error.file == path)
            }
            #expect(Date().timeIntervalSince(started) < 10)
        }
    }
}
