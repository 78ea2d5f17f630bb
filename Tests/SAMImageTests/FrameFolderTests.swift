import Foundation
import SAMTestSupport
import Testing
@testable import SAMImage
@testable import SAMImageFiles

/// Folders of video frames, as SAM 2's `init_state(video_path=folder)` lists them (numbered
/// files in numeric order) but strict about everything else, in temporary folders.
@Suite("FrameFolder")
struct FrameFolderTests {
    /// rgb420.jpg's size: the JPEG frames are copies of it, the PNG ones are written at its size.
    static let width = 37, height = 29

    static func makeFolder(_ files: [String: FrameFile]) throws -> String {
        let folder = try TestPaths.temporaryFolder("frames")
        for (name, file) in files { try file.write(to: folder + "/" + name) }
        return folder
    }

    enum FrameFile {
        case jpeg, png(width: Int, height: Int), text, folder, link(String)

        static let png = FrameFile.png(width: FrameFolderTests.width, height: FrameFolderTests.height)

        func write(to path: String) throws {
            switch self {
            case .jpeg: try FileManager.default.copyItem(atPath: Fixtures.path("rgb420.jpg"), toPath: path)
            case .png(let width, let height): try ImageIO.writePNG(patternImage(width: width, height: height), to: path)
            case .text: try Data("not a frame\n".utf8).write(to: URL(fileURLWithPath: path))
            case .folder: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            case .link(let target): try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            }
        }
    }

    /// The error `body` throws (nil if none, or if it is not a FrameFolderError).
    static func failure(_ body: () throws -> Void) -> FrameFolderError? {
        do { try body() } catch { return error as? FrameFolderError }
        return nil
    }

    @Test("frames are ordered by their number; stems and extensions kept; hidden files skipped")
    func order() throws {
        let folder = try Self.makeFolder(["10.png": .png, "9.jpg": .jpeg, "00002.JPG": .jpeg, "0.jpeg": .jpeg, "00011.Png": .png,
                                          ".hidden": .text, "._3.jpg": .text, ".thumbnails": .folder])
        let frames = try FrameFolder(folder)
        #expect(frames.count == 5)
        #expect(frames.stems == ["0", "00002", "9", "10", "00011"])
        #expect(frames.frames.map(\.number) == [0, 2, 9, 10, 11])
        #expect(frames.frames.map(\.name) == ["0.jpeg", "00002.JPG", "9.jpg", "10.png", "00011.Png"])
        #expect(try frames.checkSizes() == ImageSize(height: Self.height, width: Self.width))
        let jpeg = try ImageIO.read(Fixtures.path("rgb420.jpg"))
        #expect(try frames.frame(at: 1) == jpeg)
        #expect(try frames.frame(at: 3) == patternImage(width: Self.width, height: Self.height))
        #expect(Self.failure { _ = try frames.frame(at: 5) }?.code == .invalidArgument)
        #expect(Self.failure { _ = try frames.frame(at: -1) }?.code == .invalidArgument)
    }

    @Test("listing reads no pixels: a broken frame is found when read or checked, naming it")
    func lazyReading() throws {
        let folder = try Self.makeFolder(["0.jpg": .jpeg, "1.jpg": .text, "2.png": .png])
        let frames = try FrameFolder(folder)
        #expect(frames.count == 3)
        #expect(try frames.frame(at: 2).width == Self.width)
        let read = Self.failure { _ = try frames.frame(at: 1) }
        #expect(read?.code == .image && read?.file == folder + "/1.jpg" && read?.imageError?.code == .unsupported)
        let checked = Self.failure { _ = try frames.checkSizes() }
        #expect(checked?.code == .image && checked?.file == folder + "/1.jpg")
    }

    @Test("a frame of another size is an error naming it and both sizes, when read and up front")
    func sizeMismatch() throws {
        let folder = try Self.makeFolder(["000.jpg": .jpeg, "001.png": .png, "002.png": .png(width: 20, height: 10)])
        let frames = try FrameFolder(folder)
        #expect(try frames.frame(at: 1).height == Self.height)
        for error in [Self.failure { _ = try frames.frame(at: 2) }, Self.failure { _ = try frames.checkSizes() }] {
            #expect(error?.code == .sizeMismatch)
            #expect(error?.file == folder + "/002.png")
            #expect(error?.message.contains("20x10") == true && error?.message.contains("37x29") == true
                    && error?.message.contains("000.jpg") == true, "\(String(describing: error))")
        }
    }

    @Test("frames over the image limits are refused from their headers")
    func limits() throws {
        let folder = try Self.makeFolder(["0.png": .png, "1.jpg": .jpeg])
        let frames = try FrameFolder(folder)
        let small = ImageLimits(maxPixels: 100)
        let checked = Self.failure { _ = try frames.checkSizes(limits: small) }
        #expect(checked?.code == .image && checked?.imageError?.code == .overLimit && checked?.file == folder + "/0.png")
        #expect(Self.failure { _ = try frames.frame(at: 1, limits: small) }?.imageError?.code == .overLimit)
    }

    @Test("anything but numbered frames is an error naming the file",
          arguments: [("notes.txt", FrameFolderError.Code.unexpectedEntry), ("README", .unexpectedEntry), ("3.gif", .unexpectedEntry),
                      ("abc.jpg", .badFrameName), ("-1.jpg", .badFrameName), ("+1.jpg", .badFrameName), (" 1.jpg", .badFrameName),
                      ("1_0.jpg", .badFrameName), ("1.5.jpg", .badFrameName), ("1.jpg.jpg", .badFrameName),
                      ("1234567890123456789.jpg", .badFrameName), ("٣.jpg", .badFrameName)])
    func unexpectedFile(name: String, code: FrameFolderError.Code) throws {
        let folder = try Self.makeFolder(["0.jpg": .jpeg, name: name.hasSuffix(".jpg") ? .jpeg : .text])
        let error = Self.failure { _ = try FrameFolder(folder) }
        #expect(error?.code == code, "\(name): \(String(describing: error))")
        #expect(error?.file == folder + "/" + name)
    }

    @Test("leading zeros are fine; two files of one number are an error naming both")
    func numbers() throws {
        let zeros = try Self.makeFolder(["0000000000000000000000007.jpg": .jpeg, "6.jpg": .jpeg])
        #expect(try FrameFolder(zeros).frames.map(\.number) == [6, 7])
        let folder = try Self.makeFolder(["7.jpg": .jpeg, "007.png": .png])
        let error = Self.failure { _ = try FrameFolder(folder) }
        #expect(error?.code == .duplicateFrame)
        #expect(error?.file == folder + "/7.jpg" && error?.message.contains("007.png") == true, "\(String(describing: error))")
    }

    @Test("subfolders are errors, never read; links to frames are followed, others refused")
    func foldersAndLinks() throws {
        let outside = try Self.makeFolder(["frame.jpg": .jpeg])
        let linked = try Self.makeFolder(["0.jpg": .jpeg, "1.jpg": .link(outside + "/frame.jpg")])
        #expect(try FrameFolder(linked).frame(at: 1) == (try ImageIO.read(outside + "/frame.jpg")))
        for (name, file) in [("sub", FrameFile.folder), ("2.jpg", .folder), ("3.jpg", .link(outside)), ("4.jpg", .link(outside + "/missing.jpg"))] {
            let folder = try Self.makeFolder(["0.jpg": .jpeg, name: file])
            let error = Self.failure { _ = try FrameFolder(folder) }
            #expect(error?.code == .unexpectedEntry && error?.file == folder + "/" + name, "\(name): \(String(describing: error))")
        }
        // the folder itself may be a link to a folder
        let link = try TestPaths.temporaryFolder("frames-link") + "/video"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: linked)
        #expect(try FrameFolder(link).count == 2)
    }

    @Test("an empty folder, a file and a missing path are errors")
    func notAVideo() throws {
        let empty = try Self.makeFolder([:])
        #expect(Self.failure { _ = try FrameFolder(empty) }?.code == .empty)
        let hiddenOnly = try Self.makeFolder([".DS_Store": .text])
        #expect(Self.failure { _ = try FrameFolder(hiddenOnly) }?.code == .empty)
        #expect(Self.failure { _ = try FrameFolder(Fixtures.path("rgb420.jpg")) }?.code == .notAFolder)
        #expect(Self.failure { _ = try FrameFolder(empty + "/missing") }?.code == .notAFolder)
    }
}
