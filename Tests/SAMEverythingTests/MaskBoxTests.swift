import Testing
@testable import SAMEverything

/// batched_mask_to_box against upstream.
@Suite("Mask boxes")
struct MaskBoxTests {
    struct Extra: Decodable {
        let height: Int
        let width: Int
        let pixels: [UInt8]
        let box: [Int]
    }
    struct File: Decodable {
        let boxes: [[Int]]
        let extra: [Extra]
    }

    @Test("boxes of random, empty, single-pixel, full, row and column masks equal upstream's")
    func boxes() throws {
        let file = try Fixtures.json("mask_boxes.json", as: File.self)
        let array = try Fixtures.npy("mask_boxes.npy")
        let pixels = try array.uint8()
        let (count, height, width) = (array.shape[0], array.shape[1], array.shape[2])
        #expect(count == file.boxes.count)
        for i in 0..<count {
            let mask = try BinaryMask(width: width, height: height, pixels: Array(pixels[(i * width * height)..<((i + 1) * width * height)]))
            #expect(maskToBox(mask).xyxy == file.boxes[i], "mask \(i):\n\(picture(mask))")
        }
        for extra in file.extra {
            let mask = try BinaryMask(width: extra.width, height: extra.height, pixels: extra.pixels)
            #expect(mask.boundingBox.xyxy == extra.box, "\(extra.width)x\(extra.height)")
        }
    }

    @Test("every row length around the eight-byte words")
    func wordBoundaries() throws {
        for width in 1...20 {
            for x in 0..<width {
                var mask = try BinaryMask(width: width, height: 3)
                mask.set(x: x, y: 1, true)
                #expect(mask.boundingBox == PixelBox(x0: x, y0: 1, x1: x, y1: 1))
                mask.set(x: width - 1 - x, y: 2, true)
                #expect(mask.boundingBox == PixelBox(x0: min(x, width - 1 - x), y0: 1, x1: max(x, width - 1 - x), y1: 2))
            }
        }
        #expect(try BinaryMask(width: 0, height: 5).boundingBox == .zero)
    }
}
