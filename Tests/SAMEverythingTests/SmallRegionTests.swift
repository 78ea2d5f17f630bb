import Testing
@testable import SAMEverything

/// remove_small_regions and cv2.connectedComponentsWithStats(mask, 8) against upstream and cv2.
@Suite("Small regions and connected components")
struct SmallRegionTests {
    struct Labels: Decodable {
        let count: Int
        let sizes: [Int]
        let first_pixel: [Int]
    }
    struct Result: Decodable {
        let mode: String
        let area_thresh: Double
        let changed: Bool
        let coco: String
    }
    struct Case: Decodable {
        let index: Int
        let results: [Result]
        let labels: Labels
    }
    struct Big: Decodable {
        let height: Int
        let width: Int
        let coco: String
        let labels: Labels
        let inverse_labels: Labels
        let results: [Result]
    }
    struct File: Decodable {
        let cases: [Case]
        let big: [Big]
    }

    static func checkResults(_ mask: BinaryMask, _ results: [Result], _ context: String) throws {
        for result in results {
            guard let mode = SmallRegionMode(rawValue: result.mode) else {
                Issue.record("unknown mode \(result.mode)")
                continue
            }
            let (cleaned, changed) = removeSmallRegions(mask, areaThreshold: result.area_thresh, mode: mode)
            let expected = try COCORLE(height: mask.height, width: mask.width, counts: result.coco).mask()
            let where_ = "\(context), \(result.mode) below \(result.area_thresh)"
            #expect(changed == result.changed, "\(where_): changed \(changed), expected \(result.changed)")
            if let difference = firstPixelDifference(cleaned, expected) {
                Issue.record("\(where_): \(difference)\n\(picture(mask))\n--\n\(picture(cleaned))")
            }
        }
    }

    /// Our labels in cv2's order: same count, same sizes, and each label at cv2's first pixel of it.
    static func checkLabels(_ mask: BinaryMask, foreground: UInt8, _ expected: Labels, _ context: String) {
        let components = RunComponents(mask, foreground: foreground)
        let (labels, sizes) = components.cv2Labels(width: mask.width, height: mask.height)
        #expect(components.count + 1 == expected.count, "\(context): \(components.count + 1) labels, cv2 \(expected.count)")
        expectEqualElements(sizes, expected.sizes, context + " sizes by label")
        // (Label 0 has no pixel when every pixel is foreground: first pixel -1.)
        let atFirstPixels = expected.first_pixel.map { $0 >= 0 ? Int(labels[$0]) : -1 }
        let labelsWithPixels = expected.first_pixel.indices.map { expected.first_pixel[$0] >= 0 ? $0 : -1 }
        expectEqualElements(atFirstPixels, labelsWithPixels, context + " label at each cv2 label's first pixel")
    }

    @Test("both modes, every threshold (the all-small case too), equal upstream's")
    func removeSmall() throws {
        let file = try Fixtures.json("small_regions.json", as: File.self)
        let array = try Fixtures.npy("small_regions_masks.npy")
        let pixels = try array.uint8()
        let (height, width) = (array.shape[1], array.shape[2])
        #expect(file.cases.count == array.shape[0])
        for c in file.cases {
            let start = c.index * width * height
            let mask = try BinaryMask(width: width, height: height, pixels: Array(pixels[start..<(start + width * height)]))
            try Self.checkResults(mask, c.results, "mask \(c.index)")
            Self.checkLabels(mask, foreground: 1, c.labels, "mask \(c.index)")
        }
    }

    @Test("bigger masks: cv2's labels (order, sizes) and both modes")
    func big() throws {
        let file = try Fixtures.json("small_regions.json", as: File.self)
        #expect(!file.big.isEmpty)
        for big in file.big {
            let mask = try COCORLE(height: big.height, width: big.width, counts: big.coco).mask()
            Self.checkLabels(mask, foreground: 1, big.labels, "\(big.width)x\(big.height)")
            Self.checkLabels(mask, foreground: 0, big.inverse_labels, "\(big.width)x\(big.height) inverse")
            try Self.checkResults(mask, big.results, "\(big.width)x\(big.height)")
        }
    }

    @Test("cv2 numbers components by their first 2x2 block, not their first pixel")
    func labelOrder() throws {
        // Island A's first pixel (0, 40) comes first in raster order, but island B's block (0, 0)
        // comes before A's block (0, 20): cv2 labels B first, so the all-small rule keeps B.
        var mask = try BinaryMask(width: 64, height: 8)
        for y in 0..<3 { for x in 40..<43 { mask.set(x: x, y: y, true) } }
        for y in 1..<4 { for x in 0..<3 { mask.set(x: x, y: y, true) } }
        let (kept, changed) = removeSmallRegions(mask, areaThreshold: 100, mode: .islands)
        #expect(changed)
        #expect(kept[x: 0, y: 1] && !kept[x: 40, y: 0], "\n\(picture(kept))")
    }

    @Test("a single small island is kept (as the largest) yet reported changed")
    func singleSmallIsland() throws {
        var mask = try BinaryMask(width: 5, height: 5)
        mask.set(x: 2, y: 2, true)
        let (kept, changed) = removeSmallRegions(mask, areaThreshold: 10, mode: .islands)
        #expect(changed && kept == mask)
        let (unchanged, notChanged) = removeSmallRegions(mask, areaThreshold: 1, mode: .islands)
        #expect(!notChanged && unchanged == mask)
        // Holes mode: the background (24 pixels, touching the border) is itself a small "hole".
        let (filled, filledChanged) = removeSmallRegions(mask, areaThreshold: 25, mode: .holes)
        #expect(filledChanged && filled.area == 25)
    }

    @Test("8-connectivity: diagonal neighbours join, for runs of every length around the word size")
    func diagonal() throws {
        for length in 1...19 {
            var mask = try BinaryMask(width: 2 * length + 2, height: 2)
            for x in 0..<length { mask.set(x: x, y: 0, true) }
            for x in length..<(2 * length + 1) { mask.set(x: x, y: 1, true) }  // touches only diagonally
            #expect(RunComponents(mask, foreground: 1).count == 1, "length \(length)")
            mask.set(x: length, y: 1, false)  // now two columns apart
            #expect(RunComponents(mask, foreground: 1).count == 2, "length \(length)")
        }
    }
}
