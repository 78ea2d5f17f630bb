import Foundation
import SAMFormats
import SAMTensor
@testable import SAMImage

/// The committed fixtures (written by Fixtures/make_fixtures.py) and the closed-form patterns
/// the PNGs hold, restated from that script.
enum Fixtures {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path

    static func path(_ name: String) -> String { folder + "/" + name }

    static func uint8(_ name: String) throws -> (shape: [Int], values: [UInt8]) {
        let tensor = try NPY.read(path(name))
        precondition(tensor.dtype == .uint8, "\(name) is \(tensor.dtype), expected uint8")
        return (tensor.shape, Array(tensor.storage.bytes))
    }

    static func floats(_ name: String) throws -> FloatTensor {
        FloatTensor(try NPY.read(path(name)))
    }

    /// The patterns' grid (make_fixtures.py W, H).
    static let width = 7, height = 5

    /// An RGB image from a per-pixel rule over the fixture grid.
    static func image(_ rule: (_ x: Int, _ y: Int) -> (Int, Int, Int)) -> [UInt8] {
        var pixels = [UInt8]()
        for y in 0..<height {
            for x in 0..<width {
                let (r, g, b) = rule(x, y)
                pixels += [UInt8(r), UInt8(g), UInt8(b)]
            }
        }
        return pixels
    }

    static func gray(_ rule: (_ x: Int, _ y: Int) -> Int) -> [UInt8] {
        image { x, y in let v = rule(x, y); return (v, v, v) }
    }

    // make_fixtures.py GRAY8, RGB8, GRAY16_TABLE, WORD16, RGB16, PALETTE16
    static func gray8(_ x: Int, _ y: Int) -> Int { (x * 37 + y * 91) % 256 }
    static func rgb8(_ x: Int, _ y: Int) -> (Int, Int, Int) { ((x * 40) % 256, (y * 60) % 256, (x * y * 13 + 7) % 256) }
    static let gray16Table = [0, 1, 127, 255, 256, 257, 511, 4096, 32768, 65535]
    static func gray16(_ x: Int, _ y: Int) -> Int { gray16Table[(y * width + x) % 10] }
    static func word16(_ x: Int, _ y: Int, _ a: Int, _ b: Int, _ c: Int) -> Int { (x * a + y * b + c) % 65536 }
    static func rgb16(_ x: Int, _ y: Int) -> (Int, Int, Int) {
        (word16(x, y, 9001, 307, 0), word16(x, y, 257, 12289, 255), word16(x, y, 65535, 1, 128))
    }
    static func palette16(_ index: Int) -> (Int, Int, Int) { ((index * 16) % 256, 255 - index * 16, (index * 73) % 256) }
    static func lowGray(_ x: Int, _ y: Int, depth: Int) -> Int { (x + 2 * y) % (1 << depth) }
}
