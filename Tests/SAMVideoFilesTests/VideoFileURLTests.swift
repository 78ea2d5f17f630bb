import Foundation
import SAMImage
import SAMImageFiles
import SAMTestSupport
import Testing
import SAMVideoFiles

/// `VideoFile(contentsOf:)` opens what `VideoFile(_:)` opens and refuses what it refuses; a URL
/// that is not a file URL is a `VideoFileError` naming it, and nothing is fetched.
@Suite("VideoFile: URLs")
struct VideoFileURLTests {
    static let fixtures = TestPaths.videoFileFixtures

    init() { FFmpegLog.silence() }

    @Test("a file URL opens the path form's video: the same frame count, size, codec and pixels")
    func opensAsPath() throws {
        let path = Self.fixtures + "/tiny_h264.mp4"
        let byURL = try VideoFile(contentsOf: URL(fileURLWithPath: path), cacheBytes: 1)
        let byPath = try VideoFile(path)
        #expect(byURL.path == path)
        #expect(byURL.frameCount == byPath.frameCount && byURL.frameSize == byPath.frameSize && byURL.codecName == byPath.codecName)
        #expect(byURL.stems == byPath.stems)
        for position in [0, 5, 2, byPath.frameCount - 1] { #expect(try byURL.frame(at: position) == byPath.frame(at: position)) }
    }

    @Test("a file the path form refuses is refused the same way through its file URL, limits included")
    func refusesAsPath() throws {
        let tight = ImageLimits(maxPixels: 16)
        for (name, limits) in [("audio_only.wav", ImageLimits.default), ("size_change.h264", .default), ("missing.mp4", .default),
                               ("tiny_h264.mp4", tight)] {
            let path = Self.fixtures + "/" + name
            let byURL = Self.failure { _ = try VideoFile(contentsOf: URL(fileURLWithPath: path), limits: limits) }
            #expect(byURL != nil, "\(name)")
            #expect(byURL == Self.failure { _ = try VideoFile(path, limits: limits) })
        }
    }

    @Test("A URL that is not a file URL is a VideoFileError (unreadable) naming it")
    func remoteURLRefused() {
        let remote = URL(string: "https://example.com/clips/clip.mp4")!
        let failure = Self.failure { _ = try VideoFile(contentsOf: remote) }
        #expect(failure?.code == .unreadable)
        #expect(failure?.file == remote.absoluteString)
        #expect(failure?.frame == nil)
        #expect(failure.map { "\($0)" }?.contains("https://example.com/clips/clip.mp4: not a file URL") == true, "\(String(describing: failure))")
    }

    /// The `VideoFileError` `body` throws (nil if it throws none).
    static func failure(_ body: () throws -> Void) -> VideoFileError? {
        do { try body() } catch let error as VideoFileError { return error } catch { Issue.record("not a VideoFileError: \(error)") }
        return nil
    }
}
