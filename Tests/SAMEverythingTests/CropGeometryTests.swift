import Testing
@testable import SAMEverything

/// is_box_near_crop_edge, uncrop_boxes_xyxy, uncrop_points, uncrop_masks, box_xyxy_to_xywh.
@Suite("Crop geometry")
struct CropGeometryTests {
    struct Result: Decodable {
        let atol: Double
        let near: [Bool]
    }
    struct Case: Decodable {
        let orig_height: Int
        let orig_width: Int
        let crop_box: [Int]
        let boxes: [[Int]]
        let results: [Result]
        let uncropped: [[Int]]
        let xywh: [[Int]]
        let points64: [[Double]]
        let uncropped_points64: [[Double]]
        let points32_bits: [Int]
        let uncropped_points32_bits: [Int]
    }
    struct File: Decodable { let cases: [Case] }

    static func box(_ values: [Int]) -> PixelBox { PixelBox(x0: values[0], y0: values[1], x1: values[2], y1: values[3]) }

    @Test("near-crop-edge flags, uncropped boxes and points, XYWH equal upstream's")
    func geometry() throws {
        let file = try Fixtures.json("crop_geometry.json", as: File.self)
        for c in file.cases {
            let crop = Self.box(c.crop_box)
            let original = PixelBox(x0: 0, y0: 0, x1: c.orig_width, y1: c.orig_height)
            let boxes = c.boxes.map(Self.box)
            let context = "crop \(crop) in \(c.orig_width)x\(c.orig_height)"
            for result in c.results {
                let near = boxes.map { isBoxNearCropEdge($0, cropBox: crop, originalBox: original, atol: result.atol) }
                expectEqualElements(near, result.near, "\(context) atol \(result.atol)")
            }
            expectEqualElements(boxes.map { $0.uncropped(from: crop).xyxy }, c.uncropped, context + " uncropped boxes")
            expectEqualElements(boxes.map(\.xywh), c.xywh, context + " xywh")
            let points64 = c.points64.map { uncropPoint(SIMD2($0[0], $0[1]), from: crop) }
            expectEqualElements(points64.flatMap { [$0.x, $0.y] }, c.uncropped_points64.flatMap { $0 }, context + " float64 points")
            let points32 = stride(from: 0, to: c.points32_bits.count, by: 2).map {
                uncropPoint(SIMD2(Float(bits: c.points32_bits[$0]), Float(bits: c.points32_bits[$0 + 1])), from: crop)
            }
            expectEqualElements(points32.flatMap { [$0.x, $0.y] }.map { Int($0.bitPattern) }, c.uncropped_points32_bits, context + " float32 points")
        }
    }

    @Test("uncrop_masks pads at the crop's corner and checks sizes")
    func uncropMask() throws {
        let mask = try BinaryMask(width: 2, height: 2, pixels: [1, 0, 0, 1])
        let padded = try mask.uncropped(from: PixelBox(x0: 1, y0: 2, x1: 3, y1: 4), originalHeight: 5, originalWidth: 4)
        #expect(padded.width == 4 && padded.height == 5 && padded.area == 2)
        #expect(padded[x: 1, y: 2] && padded[x: 2, y: 3])
        #expect(try mask.uncropped(from: PixelBox(x0: 0, y0: 0, x1: 2, y1: 2), originalHeight: 2, originalWidth: 2) == mask)
        #expect(throws: SAMEverythingError.self) { try mask.uncropped(from: PixelBox(x0: 0, y0: 0, x1: 3, y1: 2), originalHeight: 5, originalWidth: 5) }
        #expect(throws: SAMEverythingError.self) { try mask.uncropped(from: PixelBox(x0: 3, y0: 0, x1: 5, y1: 2), originalHeight: 5, originalWidth: 4) }
    }
}
