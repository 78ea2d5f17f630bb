import Foundation
import SAMFormats
import Testing
@testable import SAMImage

/// Hole filling as SAM 2's `fill_holes_in_mask_scores`: hand-made masks for the rule's edges
/// (area limit, border, diagonal contact, NaN and zero), and a 256x256 score map against
/// scipy.ndimage.label with 8-connectivity (make_video_fixtures.py, which also checks that
/// upstream's CUDA block kernel, restated, finds the same components).
@Suite("MaskHoles")
struct MaskHolesTests {
    /// A mask from rows of "#" (foreground, score 1) and "." (background, score -1).
    static func mask(_ rows: [String]) -> (scores: [Float], width: Int, height: Int) {
        let width = rows[0].count
        precondition(rows.allSatisfy { $0.count == width })
        return (rows.flatMap { $0.map { $0 == "#" ? Float(1) : Float(-1) } }, width, rows.count)
    }

    /// The rows again, "+" where a hole was filled.
    static func filled(_ rows: [String], maxArea: Int) throws -> [String] {
        var (scores, width, height) = mask(rows)
        try MaskHoles.fill(&scores, width: width, height: height, maxArea: maxArea)
        return (0..<height).map { y in
            String((0..<width).map { x in
                let score = scores[y * width + x]
                return score == MaskHoles.filledScore ? "+" : (score > 0 ? "#" : ".")
            })
        }
    }

    @Test("a hole of area 8 is filled at max_area 8, one of area 9 is not")
    func areaLimit() throws {
        let rows = ["##########",
                    "#....#####",
                    "#....#...#",
                    "######...#",
                    "######...#",
                    "##########"]
        #expect(try Self.filled(rows, maxArea: 8) == ["##########",
                                                      "#++++#####",
                                                      "#++++#...#",
                                                      "######...#",
                                                      "######...#",
                                                      "##########"])
        #expect(try Self.filled(rows, maxArea: 9) == ["##########",
                                                      "#++++#####",
                                                      "#++++#+++#",
                                                      "######+++#",
                                                      "######+++#",
                                                      "##########"])
        #expect(try Self.filled(rows, maxArea: 7) == rows)
    }

    @Test("background touching the border is a component like any other")
    func border() throws {
        let rows = ["..####",
                    "..####",
                    "######",
                    "#####.",
                    "......"]
        #expect(try Self.filled(rows, maxArea: 4) == ["++####",
                                                      "++####",
                                                      "######",
                                                      "#####.",
                                                      "......"])
        #expect(try Self.filled(rows, maxArea: 7) == ["++####", "++####", "######", "#####+", "++++++"])
    }

    @Test("pixels touching only at a corner are one component (8-connectivity)")
    func diagonal() throws {
        let rows = ["#####",
                    "#.###",
                    "##.##",
                    "###.#",
                    "#####"]
        #expect(try Self.filled(rows, maxArea: 2) == rows)  // one component of 3, not three of 1
        #expect(try Self.filled(rows, maxArea: 3) == ["#####", "#+###", "##+##", "###+#", "#####"])
        // a blob of 12 with one pixel hanging off a corner: 8-connectivity counts it in (13);
        // 4-connectivity would fill both parts at 12
        let blob = ["#######",
                    "###.###",
                    "##...##",
                    "#..#..#",
                    "##...##",
                    "###.###",
                    "##.####"]
        #expect(try Self.filled(blob, maxArea: 12) == blob)
        #expect(try Self.filled(blob, maxArea: 13).allSatisfy { !$0.contains(".") })
    }

    @Test("zero and -0 are background, NaN is not and stays NaN; other scores are untouched")
    func boundaryValues() throws {
        var scores: [Float] = [2, 2, 2, 2,
                               2, 0, -0.0, 2,
                               2, .nan, 2, 2,
                               2, 2, 2, -3.5]
        try MaskHoles.fill(&scores, width: 4, height: 4, maxArea: 2)
        #expect(Array(scores[5...6]) == [0.1, 0.1])
        #expect(scores[9].isNaN)
        #expect(scores[15] == 0.1)  // alone in its corner: area 1
        #expect(scores.enumerated().filter { ![5, 6, 9, 15].contains($0.offset) }.allSatisfy { $0.element == 2 })
    }

    @Test("stacked masks are labelled one by one")
    func stacked() throws {
        // The same background column ends one mask and starts the next: joined it would be 4 pixels.
        var scores: [Float] = [1, -1,
                               1, -1,
                               -1, 1,
                               -1, 1]
        try MaskHoles.fill(&scores, width: 2, height: 2, maxArea: 2)
        #expect(scores == [1, 0.1, 1, 0.1, 0.1, 1, 0.1, 1])
    }

    @Test("a one-pixel-wide serpentine of half a million pixels is one component, without recursion")
    func serpentine() throws {
        let side = 1024
        var scores = [Float](repeating: 1, count: side * side)
        for y in stride(from: 0, to: side, by: 2) {
            for x in 0..<side { scores[y * side + x] = -1 }
            // the odd row below opens at alternate ends
            if y + 1 < side { scores[(y + 1) * side + (y / 2 % 2 == 0 ? side - 1 : 0)] = -1 }
        }
        let background = scores.filter { $0 <= 0 }.count
        var kept = scores
        try MaskHoles.fill(&kept, width: side, height: side, maxArea: background - 1)
        #expect(kept == scores)
        try MaskHoles.fill(&scores, width: side, height: side, maxArea: background)
        #expect(scores.filter { $0 == MaskHoles.filledScore }.count == background)
    }

    @Test("a 256x256 score map equals scipy's 8-connected labelling", arguments: [(0, 1), (1, 8), (2, 9), (3, 64), (4, 512)])
    func againstScipy(slot: Int, maxArea: Int) throws {
        let size = 256
        var scores = Self.holeScores(size: size)
        let original = scores
        try MaskHoles.fill(&scores, width: size, height: size, maxArea: maxArea)
        let planes = try Fixtures.uint8("holes_filled_256.npy")
        #expect(planes.shape == [5, size * size / 8])
        let packed = planes.values[slot * size * size / 8..<(slot + 1) * size * size / 8]
        var mismatches = 0
        for (index, byte) in packed.enumerated() {
            for bit in 0..<8 {
                let pixel = index * 8 + bit
                let expectedFilled = byte & (0x80 >> UInt8(bit)) != 0
                let expected = expectedFilled ? MaskHoles.filledScore : original[pixel]
                if scores[pixel].bitPattern != expected.bitPattern { mismatches += 1 }
            }
        }
        #expect(mismatches == 0)
        #expect(original.contains(0), "the map has exact zeros, so `<= 0` is exercised")
    }

    @Test("bad sizes and a non-positive area limit are typed errors")
    func badArguments() {
        var scores = [Float](repeating: -1, count: 6)
        #expect(throws: ImageError.self) { try MaskHoles.fill(&scores, width: 4, height: 1, maxArea: 8) }
        #expect(throws: ImageError.self) { try MaskHoles.fill(&scores, width: 0, height: 6, maxArea: 8) }
        #expect(throws: ImageError.self) { try MaskHoles.fill(&scores, width: 3, height: 2, maxArea: 0) }
        var none: [Float] = []
        #expect(throws: Never.self) { try MaskHoles.fill(&none, width: 3, height: 2, maxArea: 8) }
    }

    /// make_video_fixtures.py hole_scores, in the same integer steps.
    static func holeScores(size: Int) -> [Float] {
        var noise = [Int](repeating: 0, count: size * size)
        var state = 20240607
        for index in 0..<size * size {
            state = (state * 1103515245 + 12345) & 0x7FFF_FFFF
            noise[index] = (state >> 16) & 0x7FFF
        }
        var scores = [Float](repeating: 0, count: size * size)
        for y in 0..<size {
            for x in 0..<size {
                var box = 0
                for dy in -1...1 {
                    for dx in -1...1 {
                        box += noise[min(max(y + dy, 0), size - 1) * size + min(max(x + dx, 0), size - 1)]
                    }
                }
                // >> 10 floors, as Python's // 1024 does for negatives
                scores[y * size + x] = Float((box - 9 * 16384) >> 10) / 8
            }
        }
        return scores
    }
}
