import Foundation
import SAMImage
import SAMImageFiles
import SAMTestSupport
import Testing

/// `FrameFolder(contentsOf:)` lists what `FrameFolder(_:)` lists and refuses what it refuses; a URL
/// that is not a file URL is a `FrameFolderError` naming it.
@Suite("FrameFolder with URLs")
struct FrameFolderURLTests {
    @Test("a file URL lists the path form's frames, in its order, and decodes the same pixels")
    func listsAsPath() throws {
        let folder = try FrameFolderTests.makeFolder(["10.png": .png, "9.jpg": .jpeg, "00002.JPG": .jpeg, ".hidden": .text])
        let byURL = try FrameFolder(contentsOf: URL(fileURLWithPath: folder, isDirectory: true))
        let byPath = try FrameFolder(folder)
        #expect(byURL == byPath)
        #expect(byURL.stems == ["00002", "9", "10"])
        #expect(try byURL.checkSizes() == byPath.checkSizes())
        for position in 0..<byURL.count { #expect(try byURL.frame(at: position) == byPath.frame(at: position)) }
    }

    @Test("a folder the path form refuses is refused the same way through its file URL")
    func refusesAsPath() throws {
        let empty = try FrameFolderTests.makeFolder([:])
        let mixed = try FrameFolderTests.makeFolder(["0.jpg": .jpeg, "notes.txt": .text])
        let file = try FrameFolderTests.makeFolder(["0.jpg": .jpeg]) + "/0.jpg"
        for path in [empty, mixed, file, empty + "/missing"] {
            let byURL = FrameFolderTests.failure { _ = try FrameFolder(contentsOf: URL(fileURLWithPath: path)) }
            #expect(byURL != nil, "\(path)")
            #expect(byURL == FrameFolderTests.failure { _ = try FrameFolder(path) })
        }
    }

    @Test("A URL that is not a file URL is a FrameFolderError (notAFolder) naming it")
    func remoteURLRefused() {
        let remote = URL(string: "https://example.com/clips/frames/")!
        let failure = FrameFolderTests.failure { _ = try FrameFolder(contentsOf: remote) }
        #expect(failure?.code == .notAFolder)
        #expect(failure?.file == remote.absoluteString)
        #expect(failure.map { "\($0)" }?.contains("https://example.com/clips/frames/: not a file URL") == true, "\(String(describing: failure))")
    }
}
