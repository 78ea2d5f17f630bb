import Foundation
import Testing
@testable import SAMImage
@testable import SAMImageFiles

/// Decoding matches `np.array(Image.open(f).convert("RGB"))`: make_fixtures.py asserts each
/// closed form below against Pillow 13, these tests assert the same closed forms against ours.
@Suite("Image reading and writing")
struct ImageIOTests {
    static func decoded(_ name: String) throws -> RGBImage {
        let image = try ImageIO.read(Fixtures.path(name))
        #expect(image.width == Fixtures.width && image.height == Fixtures.height, "\(name) size")
        return image
    }

    @Test("8-bit gray, RGB, and gray with tRNS read as their samples")
    func eightBit() throws {
        #expect(try Self.decoded("gray8.png").pixels == Fixtures.gray(Fixtures.gray8))
        #expect(try Self.decoded("gray8_trns.png").pixels == Fixtures.gray(Fixtures.gray8))
        #expect(try Self.decoded("rgb8.png").pixels == Fixtures.image(Fixtures.rgb8))
    }

    @Test("1, 2, 4-bit gray scale to 0...255", arguments: [1, 2, 4])
    func lowBitGray(depth: Int) throws {
        let scale = 255 / ((1 << depth) - 1)
        #expect(try Self.decoded("gray\(depth).png").pixels == Fixtures.gray { x, y in Fixtures.lowGray(x, y, depth: depth) * scale })
    }

    @Test("alpha is dropped, not composited (RGBA, gray+alpha, palette tRNS, RGB tRNS)")
    func alphaIgnored() throws {
        #expect(try Self.decoded("rgba8.png").pixels == Fixtures.image(Fixtures.rgb8))
        #expect(try Self.decoded("gray_alpha8.png").pixels == Fixtures.gray(Fixtures.gray8))
        #expect(try Self.decoded("rgb8_trns_gamma.png").pixels == Fixtures.image(Fixtures.rgb8))
        // Pixel (0, 0) of rgba8.png has alpha 0 and still reads as its colour.
        let image = try Self.decoded("rgba8.png")
        #expect(image[0, 0, 2] == 7)
    }

    @Test("16-bit RGB, RGBA and gray+alpha keep the high byte, as Pillow's ;16B unpackers")
    func sixteenBitHighByte() throws {
        let high = Fixtures.image { x, y in let (r, g, b) = Fixtures.rgb16(x, y); return (r >> 8, g >> 8, b >> 8) }
        #expect(try Self.decoded("rgb16.png").pixels == high)
        #expect(try Self.decoded("rgba16.png").pixels == high)
        #expect(try Self.decoded("gray_alpha16.png").pixels == Fixtures.gray { x, y in Fixtures.word16(x, y, 4099, 12289, 0) >> 8 })
    }

    @Test("16-bit gray is clipped to 255, as Pillow's I;16 -> RGB conversion does")
    func sixteenBitGrayClipped() throws {
        #expect(try Self.decoded("gray16.png").pixels == Fixtures.gray { x, y in min(Fixtures.gray16(x, y), 255) })
    }

    @Test("palettes of 1, 2, 4 and 8 bits are looked up", arguments: [1, 2, 4, 8])
    func palettes(depth: Int) throws {
        let count = min(1 << depth, 16)
        #expect(try Self.decoded("palette\(depth).png").pixels == Fixtures.image { x, y in
            Fixtures.palette16((y * Fixtures.width + x) % count)
        })
    }

    @Test("Adam7-interlaced PNGs")
    func interlaced() throws {
        #expect(try Self.decoded("rgb8_interlaced.png").pixels == Fixtures.image(Fixtures.rgb8))
        #expect(try Self.decoded("gray2_interlaced.png").pixels == Fixtures.gray { x, y in Fixtures.lowGray(x, y, depth: 2) * 85 })
    }

    @Test("JPEGs decode as Pillow decodes them", arguments: ["rgb420.jpg", "rgb444.jpg", "progressive.jpg", "gray.jpg", "cmyk.jpg"])
    func jpeg(name: String) throws {
        let image = try ImageIO.read(Fixtures.path(name))
        let expected = try Fixtures.uint8(name + ".npy")
        #expect(expected.shape == [image.height, image.width, 3])
        let worst = zip(image.pixels, expected.values).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst == 0, "\(name): max difference \(worst) levels from Pillow")
    }

    @Test("format is told by signature, not by extension")
    func sniffing() throws {
        let bytes = try ImageIO.readFile(Fixtures.path("rgb420.jpg"))
        #expect(ImageIO.sniff(bytes) == .jpeg)
        #expect(ImageIO.sniff(try ImageIO.readFile(Fixtures.path("rgb8.png"))) == .png)
        #expect(ImageIO.sniff(Array("GIF89a".utf8)) == nil)
        #expect(try ImageIO.decode(bytes, name: "photo.png").width == 37)
    }

    static let badFiles: [(String, ImageError.Code, String)] = [
        ("truncated.png", .truncated, "truncated"),
        ("truncated.jpg", .truncated, "truncated"),
        ("zero_width.png", .badDimensions, "size"),
        ("huge.png", .badDimensions, "40000x5"),
        ("bad_crc.png", .corrupt, "CRC"),
        ("not_an_image.png", .unsupported, "not a PNG or JPEG"),
        ("empty.png", .corrupt, "empty"),
        ("missing.png", .unreadable, "cannot open"),
    ]

    @Test("unreadable, truncated, corrupt and absurd images are typed errors naming the file",
          arguments: badFiles.indices)
    func badInput(case index: Int) {
        let (name, code, fragment) = Self.badFiles[index]
        let file = Fixtures.path(name)
        do {
            _ = try ImageIO.read(file)
            Issue.record("\(name) was read without an error")
        } catch {
            #expect(error.code == code, "\(name): \(error)")
            #expect(error.file == file)
            #expect(error.description.contains(name))
            #expect(error.message.contains(fragment), "\(name): \(error.message)")
        }
    }

    @Test("a folder is refused as unreadable")
    func folder() {
        #expect(throws: ImageError.self) { try ImageIO.read(Fixtures.folder) }
    }

    @Test("PNG writer round-trips 8-bit RGB and gray, atomically")
    func writeRoundTrip() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("samimage-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let rgb = try RGBImage(width: Fixtures.width, height: Fixtures.height, pixels: Fixtures.image(Fixtures.rgb8))
        try ImageIO.writePNG(rgb, to: folder + "/rgb.png")
        #expect(try ImageIO.read(folder + "/rgb.png") == rgb)
        let gray = (0..<(Fixtures.width * Fixtures.height)).map { UInt8(($0 * 37) % 256) }
        try ImageIO.writeGrayPNG(pixels: gray, width: Fixtures.width, height: Fixtures.height, to: folder + "/gray.png")
        #expect(try ImageIO.read(folder + "/gray.png").pixels == gray.flatMap { [$0, $0, $0] })
        // Overwriting goes through a temporary sibling that does not survive.
        try ImageIO.writePNG(rgb, to: folder + "/rgb.png")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["gray.png", "rgb.png"])
    }

    /// Noise does not compress: the encoder's one pass into libpng's size bound must hold it whole.
    @Test("PNG writer round-trips incompressible noise at odd sizes, RGB and gray")
    func writeNoiseRoundTrip() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("samimage-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func noise(_ count: Int) -> [UInt8] {
            (0..<count).map { _ in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return UInt8(truncatingIfNeeded: state >> 56)
            }
        }
        for (width, height) in [(1, 1), (333, 97), (1, 513), (2049, 3)] {
            let rgb = try RGBImage(width: width, height: height, pixels: noise(width * height * 3))
            try ImageIO.writePNG(rgb, to: folder + "/rgb.png")
            #expect(try ImageIO.read(folder + "/rgb.png") == rgb, "RGB \(width)x\(height)")
            let gray = noise(width * height)
            try ImageIO.writeGrayPNG(pixels: gray, width: width, height: height, to: folder + "/gray.png")
            #expect(try ImageIO.read(folder + "/gray.png").pixels == gray.flatMap { [$0, $0, $0] }, "gray \(width)x\(height)")
        }
    }

    @Test("writer errors are typed: missing folder, wrong buffer size, empty image")
    func writeErrors() throws {
        let rgb = try RGBImage(width: 2, height: 1, pixels: [1, 2, 3, 4, 5, 6])
        #expect { try ImageIO.writePNG(rgb, to: "/nonexistent-folder/x.png") } throws: { error in
            (error as? ImageError)?.code == .writeFailed
        }
        #expect { try ImageIO.writeGrayPNG(pixels: [1, 2, 3], width: 2, height: 2, to: "/tmp/never.png") } throws: { error in
            (error as? ImageError)?.code == .invalidArgument
        }
        #expect { try ImageIO.writeGrayPNG(pixels: [], width: 0, height: 0, to: "/tmp/never.png") } throws: { error in
            (error as? ImageError)?.code == .invalidArgument
        }
        #expect { try RGBImage(width: 2, height: 2, pixels: [0]) } throws: { error in
            (error as? ImageError)?.code == .invalidArgument
        }
    }
}
