import Foundation
import SAMImage
import SAMImageFiles
import SAMTestSupport
import Testing

/// `ImageIO`'s URL forms give what its path forms give; a URL that is not a file URL is an
/// `ImageError` naming it, never a crash or a fetch.
@Suite("Image reading and writing with URLs")
struct ImageIOURLTests {
    static let remote = URL(string: "https://example.com/photos/photo.png")!

    @Test("read(contentsOf:) and header(contentsOf:) give what the path forms give",
          arguments: ["rgb8.png", "gray16.png", "gray.jpg", "cmyk.jpg"])
    func readsAsPath(name: String) throws {
        let url = URL(fileURLWithPath: Fixtures.path(name))
        #expect(try ImageIO.read(contentsOf: url) == (try ImageIO.read(Fixtures.path(name))))
        #expect(try ImageIO.header(contentsOf: url) == (try ImageIO.header(Fixtures.path(name))))
        let tight = ImageLimits(maxPixels: 4)
        let overBudget = Self.failure { _ = try ImageIO.read(contentsOf: url, limits: tight) }
        #expect(overBudget?.code == .overLimit)
        #expect(overBudget == Self.failure { _ = try ImageIO.read(Fixtures.path(name), limits: tight) })
    }

    @Test("writePNG(_:to:) and writeGrayPNG(pixels:…:to:) write the bytes the path forms write")
    func writesAsPath() throws {
        let folder = try TestPaths.temporaryFolder("imageio-url")
        let image = try ImageIO.read(Fixtures.path("rgb8.png"))
        try ImageIO.writePNG(image, to: folder + "/path.png")
        try ImageIO.writePNG(image, to: URL(fileURLWithPath: folder + "/url.png"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/url.png")) == Data(contentsOf: URL(fileURLWithPath: folder + "/path.png")))
        let gray = (0..<(image.width * image.height)).map { UInt8($0 * 7 % 256) }
        try ImageIO.writeGrayPNG(pixels: gray, width: image.width, height: image.height, to: folder + "/gray-path.png")
        try ImageIO.writeGrayPNG(pixels: gray, width: image.width, height: image.height, to: URL(fileURLWithPath: folder + "/gray-url.png"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/gray-url.png"))
                == Data(contentsOf: URL(fileURLWithPath: folder + "/gray-path.png")))
        // The output rule is the path form's: a kept file is refused through the URL too.
        let kept = Self.failure { try ImageIO.writePNG(image, to: URL(fileURLWithPath: folder + "/url.png"), policy: .init(existing: .keep)) }
        #expect(kept?.code == .outputRefused)
    }

    @Test("A URL that is not a file URL is an ImageError naming it; nothing is read or written")
    func remoteURLRefused() throws {
        let image = try RGBImage(width: 1, height: 1, pixels: [0, 0, 0])
        Self.expectRefused(.unreadable) { _ = try ImageIO.read(contentsOf: Self.remote) }
        Self.expectRefused(.unreadable) { _ = try ImageIO.header(contentsOf: Self.remote) }
        Self.expectRefused(.invalidArgument) { try ImageIO.writePNG(image, to: Self.remote) }
        Self.expectRefused(.invalidArgument) { try ImageIO.writeGrayPNG(pixels: [0], width: 1, height: 1, to: Self.remote) }
        #expect(throws: ImageError.self) { try ImageIO.read(contentsOf: URL(string: "data:image/png;base64,iVBORw0KGgo=")!) }
    }

    static func expectRefused(_ code: ImageError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        let error = failure(body)
        #expect(error?.code == code, sourceLocation: sourceLocation)
        #expect(error?.file == remote.absoluteString, sourceLocation: sourceLocation)
        #expect(error.map { "\($0)" }?.contains("https://example.com/photos/photo.png: not a file URL") == true, "\(String(describing: error))",
                sourceLocation: sourceLocation)
    }

    /// The `ImageError` `body` throws (nil if it throws none).
    static func failure(_ body: () throws -> Void) -> ImageError? {
        do { try body() } catch let error as ImageError { return error } catch { Issue.record("not an ImageError: \(error)") }
        return nil
    }
}
