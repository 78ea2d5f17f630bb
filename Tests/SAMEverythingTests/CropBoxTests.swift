import Testing
@testable import SAMEverything

/// generate_crop_boxes against upstream for many image sizes, layer counts and overlaps.
@Suite("Crop boxes")
struct CropBoxTests {
    struct Case: Decodable {
        let height: Int
        let width: Int
        let layers: Int
        let overlap_ratio: Double
        let boxes: [Int]
        let layer_indices: [Int]
        let reciprocal_area_bits: [Int]?
    }
    struct File: Decodable { let cases: [Case] }

    @Test("boxes and layer indices equal upstream's")
    func cropBoxes() throws {
        let file = try Fixtures.json("crop_boxes.json", as: File.self)
        #expect(file.cases.count > 200)
        for c in file.cases {
            let (boxes, layers) = try generateCropBoxes(imageHeight: c.height, imageWidth: c.width, layerCount: c.layers, overlapRatio: c.overlap_ratio)
            let context = "\(c.width)x\(c.height), \(c.layers) layers, overlap \(c.overlap_ratio)"
            expectEqualElements(boxes.flatMap(\.xyxy), c.boxes, context)
            expectEqualElements(layers, c.layer_indices, context)
            if let reciprocal = c.reciprocal_area_bits {
                expectEqualElements(boxes.map { Int($0.reciprocalArea.bitPattern) }, reciprocal, context + " 1 / box_area")
            }
        }
        #expect(file.cases.filter { $0.reciprocal_area_bits != nil }.count == 3)
    }

    @Test("the default overlap on SAM's example photo size")
    func example() throws {
        let (boxes, layers) = try generateCropBoxes(imageHeight: 1365, imageWidth: 2048, layerCount: 1, overlapRatio: 512.0 / 1500)
        #expect(layers == [0, 1, 1, 1, 1])
        // overlap int(512/1500 * 1365 * 1) = 465; crop_w ceil((465 + 2048) / 2) = 1257; crop_h 915.
        #expect(boxes == [PixelBox(x0: 0, y0: 0, x1: 2048, y1: 1365),
                          PixelBox(x0: 0, y0: 0, x1: 1257, y1: 915), PixelBox(x0: 0, y0: 450, x1: 1257, y1: 1365),
                          PixelBox(x0: 792, y0: 0, x1: 2048, y1: 915), PixelBox(x0: 792, y0: 450, x1: 2048, y1: 1365)])
    }

    @Test("arguments Python would reject are errors")
    func invalid() {
        #expect(throws: SAMEverythingError.self) { try generateCropBoxes(imageHeight: 10, imageWidth: 10, layerCount: 1, overlapRatio: .nan) }
        #expect(throws: SAMEverythingError.self) { try generateCropBoxes(imageHeight: -1, imageWidth: 10, layerCount: 1, overlapRatio: 0.3) }
    }
}
