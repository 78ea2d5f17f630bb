import Testing
@testable import SAMEverything

/// mask_to_rle_pytorch, rle_to_mask, area_from_rle, coco_encode_rle and pycocotools' decoding.
@Suite("RLE, uncompressed and COCO")
struct RLETests {
    struct Stored: Decodable {
        let height: Int
        let width: Int
        let offset: Int
        let note: String
        let counts: [Int]
        let coco: String
        let area: Int
    }
    struct Rectangles: Decodable {
        let height: Int
        let width: Int
        let rects: [[Int]]
        let counts: [Int]
        let coco: String
        let area: Int
    }
    struct Uncrop: Decodable {
        let orig_height: Int
        let orig_width: Int
        let crop_box: [Int]
        let offset: Int
        let counts: [Int]
    }
    struct File: Decodable {
        let stored: [Stored]
        let rectangles: [Rectangles]
        let uncrop: [Uncrop]
    }

    /// Checks every direction against upstream's counts, COCO string and area.
    static func check(_ mask: BinaryMask, counts: [Int], coco: String, area: Int, _ context: String) throws {
        let rle = UncompressedRLE(mask: mask)
        expectEqualElements(rle.counts, counts, context + " counts")
        #expect(rle.area == area, "\(context) area")
        #expect(try COCORLE(rle).counts == coco, "\(context) COCO string")
        let fromCOCO = try UncompressedRLE(COCORLE(height: mask.height, width: mask.width, counts: coco))
        expectEqualElements(fromCOCO.counts, counts, context + " counts read from the COCO string")
        let decoded = try UncompressedRLE(height: mask.height, width: mask.width, counts: counts).mask()
        if let difference = firstPixelDifference(decoded, mask) { Issue.record("\(context) rle_to_mask: \(difference)") }
        let viaCOCO = try COCORLE(height: mask.height, width: mask.width, counts: coco).mask()
        if let difference = firstPixelDifference(viaCOCO, mask) { Issue.record("\(context) COCO decode: \(difference)") }
    }

    @Test("stored masks: counts, area, COCO strings both ways, decoding")
    func stored() throws {
        let file = try Fixtures.json("rle.json", as: File.self)
        let pixels = try Fixtures.npy("rle_masks.npy").uint8()
        #expect(file.stored.count >= 15)
        for c in file.stored {
            let mask = try BinaryMask(width: c.width, height: c.height, pixels: Array(pixels[c.offset..<(c.offset + c.width * c.height)]))
            try Self.check(mask, counts: c.counts, coco: c.coco, area: c.area, "\(c.note) \(c.width)x\(c.height)")
        }
    }

    @Test("big masks: runs past 2^16 and 2^20, multi-character and negative COCO values")
    func rectangles() throws {
        let file = try Fixtures.json("rle.json", as: File.self)
        for c in file.rectangles {
            var pixels = [UInt8](repeating: 0, count: c.width * c.height)
            for r in c.rects {
                for y in r[0]..<r[1] { for x in r[2]..<r[3] { pixels[y * c.width + x] = 1 } }
            }
            let mask = try BinaryMask(width: c.width, height: c.height, pixels: pixels)
            try Self.check(mask, counts: c.counts, coco: c.coco, area: c.area, "\(c.width)x\(c.height) \(c.rects)")
        }
    }

    @Test("uncrop_masks then mask_to_rle_pytorch, padded or encoded in place")
    func uncropped() throws {
        let file = try Fixtures.json("rle.json", as: File.self)
        let pixels = try Fixtures.npy("rle_masks.npy").uint8()
        #expect(file.uncrop.count >= 20)
        for c in file.uncrop {
            let crop = PixelBox(x0: c.crop_box[0], y0: c.crop_box[1], x1: c.crop_box[2], y1: c.crop_box[3])
            let (width, height) = (crop.x1 - crop.x0, crop.y1 - crop.y0)
            let mask = try BinaryMask(width: width, height: height, pixels: Array(pixels[c.offset..<(c.offset + width * height)]))
            let context = "crop \(crop) in \(c.orig_width)x\(c.orig_height)"
            let inPlace = try UncompressedRLE(mask: mask, uncroppedFrom: crop, originalHeight: c.orig_height, originalWidth: c.orig_width)
            expectEqualElements(inPlace.counts, c.counts, context + " (in place)")
            #expect(inPlace.height == c.orig_height && inPlace.width == c.orig_width)
            let padded = try mask.uncropped(from: crop, originalHeight: c.orig_height, originalWidth: c.orig_width)
            expectEqualElements(UncompressedRLE(mask: padded).counts, c.counts, context + " (padded)")
        }
    }

    @Test("decode(encode(mask)) == mask for random masks, shapes and placements")
    func roundTrip() throws {
        var random = SplitMix64(seed: 7)
        for trial in 0..<300 {
            let width = Int.random(in: 1...150, using: &random)
            let height = Int.random(in: 1...70, using: &random)
            let density = Double.random(in: 0...1, using: &random)
            let runLength = Int.random(in: 1...40, using: &random)
            // Runs of random length so masks have both long runs and speckle.
            var pixels = [UInt8]()
            while pixels.count < width * height {
                let value: UInt8 = Double.random(in: 0..<1, using: &random) < density ? 1 : 0
                pixels += [UInt8](repeating: value, count: min(Int.random(in: 1...runLength, using: &random), width * height - pixels.count))
            }
            let mask = try BinaryMask(width: width, height: height, pixels: pixels)
            let rle = UncompressedRLE(mask: mask)
            expectEqualElements(rle.counts, Self.naiveCounts(mask), "trial \(trial) \(width)x\(height) against the column-by-column encoder")
            #expect(rle.area == mask.area)
            #expect(rle.counts.reduce(0, +) == width * height)
            if let difference = firstPixelDifference(try rle.mask(), mask) { Issue.record("trial \(trial) RLE: \(difference)") }
            let coco = try COCORLE(rle)
            #expect(try UncompressedRLE(coco) == rle, "trial \(trial)")
            if let difference = firstPixelDifference(try coco.mask(), mask) { Issue.record("trial \(trial) COCO: \(difference)") }
            // The same mask placed in a larger image: in-place encoding equals the padded mask's.
            let originalWidth = width + Int.random(in: 0...20, using: &random)
            let originalHeight = height + Int.random(in: 0...20, using: &random)
            let x0 = Int.random(in: 0...(originalWidth - width), using: &random)
            let y0 = Int.random(in: 0...(originalHeight - height), using: &random)
            let crop = PixelBox(x0: x0, y0: y0, x1: x0 + width, y1: y0 + height)
            let padded = try mask.uncropped(from: crop, originalHeight: originalHeight, originalWidth: originalWidth)
            let inPlace = try UncompressedRLE(mask: mask, uncroppedFrom: crop, originalHeight: originalHeight, originalWidth: originalWidth)
            #expect(inPlace == UncompressedRLE(mask: padded), "trial \(trial) crop \(crop) in \(originalWidth)x\(originalHeight)")
            #expect(padded.area == mask.area)
        }
    }

    /// mask_to_rle_pytorch restated pixel by pixel: walk the columns, count, flip.
    static func naiveCounts(_ mask: BinaryMask) -> [Int] {
        var counts = [Int]()
        var value = false
        var run = 0
        for x in 0..<mask.width {
            for y in 0..<mask.height {
                if mask[x: x, y: y] != value {
                    counts.append(run)
                    run = 0
                    value.toggle()
                }
                run += 1
            }
        }
        counts.append(run)
        return counts
    }

    @Test("malformed COCO strings and RLEs are typed errors")
    func malformed() throws {
        func rejects(_ counts: String, height: Int = 2, width: Int = 3) -> Bool {
            do throws(SAMEverythingError) {
                _ = try COCORLE(height: height, width: width, counts: counts).mask()
                return false
            } catch {
                return !error.message.isEmpty
            }
        }
        #expect(!rejects("06"))          // [0, 6]: a valid 2x3 all-one mask
        #expect(rejects("07"))           // adds up to 7, not 6
        #expect(rejects("05"))           // 5, not 6
        #expect(rejects("0 6"))          // a space (32) is outside 48...111
        #expect(rejects("0\u{7f}"))      // above 111
        #expect(rejects("0P"))           // 'P' (80 = 48 + 32): a continuation with nothing after it
        #expect(rejects("PPPPPPPP0"))    // a value of more than 7 characters
        #expect(rejects("0?"))           // '?' (63 = 48 + 15): [0, 15], which adds up to 15, not 6
        #expect(rejects("0`"))           // '`' (96): continuation flag and sign, then the end
        #expect(rejects("", height: 1, width: 1))  // no counts for one pixel
        #expect(!rejects("", height: 0, width: 4))
        #expect(throws: SAMEverythingError.self) { try UncompressedRLE(height: 2, width: 2, counts: [1, -1, 4]).mask() }
        #expect(throws: SAMEverythingError.self) { try UncompressedRLE(height: 2, width: 2, counts: [5]).mask() }
        #expect(throws: SAMEverythingError.self) { try COCORLE(UncompressedRLE(height: 1, width: 1, counts: [-1])) }
        // 'M' (77 = 48 + 29: sign bit set) is -3; the 4th count is 2 + -3 = -1.
        #expect(rejects("123M", height: 1, width: 6))
    }

    @Test("the delta against the count two before starts at the fourth count")
    func deltaRule() throws {
        // counts [1, 2, 3, 4]: the 4th is written as 4 - 2 = 2 ('2'), the 3rd as 3 itself ('3').
        #expect(try COCORLE.encodeCounts([1, 2, 3, 4]) == "1232")
        #expect(try COCORLE.decodeCounts("1232") == [1, 2, 3, 4])
        // 5 after 40: delta -35 needs two characters with the sign bit in the last.
        #expect(try COCORLE.decodeCounts(try COCORLE.encodeCounts([0, 40, 1, 5])) == [0, 40, 1, 5])
        #expect(try COCORLE.encodeCounts([]) == "")
    }
}
