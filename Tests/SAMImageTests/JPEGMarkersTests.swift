import Foundation
import Testing
@testable import SAMImage
@testable import SAMImageFiles

/// Scans counted from a JPEG's markers, before decoding: what the fixtures hold, byte stuffing and
/// restart markers inside scans, fill bytes before a marker, and a damaged tail.
@Suite("JPEG markers: scans counted before decoding")
struct JPEGMarkersTests {
    static func bytes(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(name)))) }

    @Test("the fixtures: a progressive file's 10 scans, one scan each for baseline files, the frame's size")
    func fixtures() throws {
        let progressive = JPEGMarkers(try Self.bytes("progressive.jpg"), stoppingAfter: 100)
        #expect(progressive.scans == 10)
        for name in ["gray.jpg", "rgb420.jpg", "rgb444.jpg", "cmyk.jpg"] {
            let markers = JPEGMarkers(try Self.bytes(name), stoppingAfter: 100)
            #expect(markers.scans == 1, "\(name): \(markers.scans)")
            let image = try ImageIO.read(Fixtures.path(name))
            #expect(markers.width == image.width && markers.height == image.height, "\(name)")
        }
    }

    @Test("stuffed zeros, restart markers and fill bytes inside entropy-coded data are not scans; the count stops past the limit")
    func entropyCodedData() {
        let sof: [UInt8] = [0xFF, 0xC2, 0x00, 0x0B, 8, 0x01, 0x00, 0x02, 0x00, 1, 1, 0x11, 0]  // 512x256, one component
        let sos: [UInt8] = [0xFF, 0xDA, 0x00, 0x08, 1, 1, 0x00, 0, 63, 0]
        // Entropy data holding FF 00 (a stuffed FF), RST0 and RST7, and fill bytes FF FF before the next marker.
        let data: [UInt8] = [0x12, 0xFF, 0x00, 0xDA, 0xFF, 0xD0, 0x34, 0xFF, 0xD7, 0x56, 0xFF, 0x00, 0xFF, 0xFF]
        var file: [UInt8] = [0xFF, 0xD8] + sof
        for _ in 0..<5 { file += sos + data }
        file += [0xFF, 0xD9]
        let markers = JPEGMarkers(file, stoppingAfter: 100)
        #expect(markers.scans == 5)
        #expect(markers.width == 512 && markers.height == 256)
        #expect(JPEGMarkers(file, stoppingAfter: 2).scans == 3)
        // Cut inside a segment's length: the walk ends quietly with what it met.
        #expect(JPEGMarkers(Array(file.prefix(sof.count + 2 + sos.count + 3)), stoppingAfter: 100).scans == 1)
        #expect(JPEGMarkers([0xFF, 0xD8, 0xFF], stoppingAfter: 100).scans == 0)
    }
}
