import Foundation
import SAMFormats
import SAMImageFiles
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMImage

/// Pillow's default `Image.resize` filter, BICUBIC, against Pillow 13 (make_video_fixtures.py):
/// equal bit for bit, on the small cases whole and on the video loader's real sizes by sampled
/// rows and per-row and per-column sums.
@Suite("Pillow's bicubic resize")
struct BicubicResizeTests {
    @Test("small resizes equal Image.resize(BICUBIC)",
          arguments: [("enlarge", 10, 7, 23, 17), ("shrink", 37, 23, 16, 11), ("square", 64, 48, 96, 96),
                      ("mixed", 40, 30, 61, 11), ("vertical_only", 40, 30, 40, 17), ("horizontal_only", 40, 30, 13, 30),
                      ("tall", 9, 60, 8, 20)])
    func small(name: String, width: Int, height: Int, outWidth: Int, outHeight: Int) throws {
        let resized = try PILResize.resize(patternImage(width: width, height: height), width: outWidth, height: outHeight, filter: .bicubic)
        let expected = try Fixtures.uint8("bicubic_\(name).npy")
        #expect(expected.shape == [outHeight, outWidth, 3])
        #expect(resized.pixels == expected.values)
    }

    @Test("video frames to SAM 2's 1024 square equal Pillow's rows and sums",
          arguments: [("640x480_1024", 640, 480), ("1920x1080_1024", 1920, 1080)])
    func videoSizes(name: String, width: Int, height: Int) throws {
        try expectPillow(try PILResize.resize(patternImage(width: width, height: height), width: 1024, height: 1024, filter: .bicubic), name: name)
    }

    @Test("a photo file read and resized as SAM 2's frame loader does equals Pillow's")
    func photo() throws {
        // ref: sam2/utils/misc.py _load_img_as_tensor: Image.open(img_path).convert("RGB").resize((image_size, image_size))
        let photo = try ImageIO.read(TestPaths.packageRoot + "/reference_outputs/demo/photo.png")
        try expectPillow(try PILResize.resize(photo, width: 1024, height: 1024, filter: .bicubic), name: "photo_1024")
    }

    /// `resized` (1024x1024) against make_video_fixtures.py's sampled rows and sums of `name`.
    private func expectPillow(_ resized: RGBImage, name: String) throws {
        let rows = try Fixtures.uint8("bicubic_\(name)_rows.npy")
        let sampled = [0, 1, 2, 337, 511, 512, 1021, 1022, 1023]  // make_video_fixtures.py LARGE_ROWS
        #expect(rows.shape == [sampled.count, 1024, 3])
        let rowLength = 1024 * 3
        for (slot, row) in sampled.enumerated() {
            let differing = zip(resized.pixels[row * rowLength..<(row + 1) * rowLength], rows.values[slot * rowLength..<(slot + 1) * rowLength])
                .filter { $0 != $1 }.count
            #expect(differing == 0, "row \(row): \(differing) of \(rowLength) bytes differ")
        }
        var rowSums = [Int64](repeating: 0, count: 1024), columnSums = [Int64](repeating: 0, count: 1024)
        for y in 0..<1024 {
            for x in 0..<1024 {
                let at = (y * 1024 + x) * 3
                let sum = Int64(resized.pixels[at]) + Int64(resized.pixels[at + 1]) + Int64(resized.pixels[at + 2])
                rowSums[y] += sum
                columnSums[x] += sum
            }
        }
        #expect(rowSums == (try int64s("bicubic_\(name)_row_sums.npy")))
        #expect(columnSums == (try int64s("bicubic_\(name)_column_sums.npy")))
    }

    @Test("the cubic's taps: interpolating at knots, negative lobes, wider support than bilinear")
    func coefficients() {
        // Enlarging 4 -> 8: each output sees 4 (or fewer at the edges) inputs with a negative outer pair.
        let table = PILResize.coefficients(inSize: 4, outSize: 8, filter: .bicubic)
        #expect(table.stride == 5)
        let one = Int32(1 << PILResize.precisionBits)
        for output in 0..<8 {
            let taps = table.weights[output * table.stride..<output * table.stride + table.count[output]]
            // normalised: rounding leaves the sum within a unit per tap of 1.0
            #expect(abs(taps.reduce(0, +) - one) <= Int32(taps.count))
        }
        #expect(table.weights[2 * table.stride..<2 * table.stride + table.count[2]].contains { $0 < 0 })
        #expect(PILResize.cubic(0) == 1 && PILResize.cubic(1) == 0 && PILResize.cubic(2) == 0 && PILResize.cubic(-1.5) < 0)
        // the bilinear table is the one the bilinear fixtures pin, unchanged by the filter parameter
        let bilinear = PILResize.coefficients(inSize: 4, outSize: 8)
        #expect(bilinear.stride == 3)
        #expect(bilinear.weights == PILResize.coefficients(inSize: 4, outSize: 8, filter: .bilinear).weights)
    }

    @Test("clamps the overshoot: a hard black-white edge stays within 0...255 and rings")
    func overshoot() throws {
        var edge = RGBImage(width: 8, height: 1, fill: (0, 0, 0))
        for x in 4..<8 { for c in 0..<3 { edge[x, 0, c] = 255 } }
        let bilinear = try PILResize.resize(edge, width: 16, height: 1)
        let bicubic = try PILResize.resize(edge, width: 16, height: 1, filter: .bicubic)
        #expect(bilinear != bicubic)
        #expect(bicubic.pixels.first == 0 && bicubic.pixels.last == 255)
        #expect(try PILResize.resize(edge, width: 8, height: 1, filter: .bicubic) == edge)
    }

    private func int64s(_ name: String) throws -> [Int64] {
        let tensor = try NPY.read(Fixtures.path(name))
        precondition(tensor.dtype == .int64, "\(name) is \(tensor.dtype), expected int64")
        return tensor.int64s()
    }
}
