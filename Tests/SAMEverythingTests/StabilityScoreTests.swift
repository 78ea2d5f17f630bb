import Testing
@testable import SAMEverything

/// calculate_stability_score and thresholding against upstream (torch, float32).
@Suite("Stability score")
struct StabilityScoreTests {
    struct Case: Decodable {
        let mask_threshold: Double
        let threshold_offset: Double
        let scores_bits: [Int]
        let intersections: [Int]
        let unions: [Int]
    }
    struct Wide: Decodable {
        let height: Int
        let width: Int
        let mask_threshold: Double
        let threshold_offset: Double
        let score_bits: Int
    }
    struct File: Decodable {
        let count: Int
        let height: Int
        let width: Int
        let cases: [Case]
        let binary_thresholds: [Double]
        let wide_rows: [Wide]
    }

    /// Equal floats, or both NaN (0 / 0's NaN has its sign bit set on x86, clear when folded).
    static func same(_ a: Float, _ b: Float) -> Bool { a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN) }

    @Test("scores and counts equal upstream's for every threshold and offset")
    func scores() throws {
        let file = try Fixtures.json("stability.json", as: File.self)
        let logits = try Fixtures.npy("stability_logits.npy").float32()
        let size = file.height * file.width
        #expect(logits.count == file.count * size)
        for c in file.cases {
            var scores = [Float](), intersections = [Int](), unions = [Int]()
            for mask in 0..<file.count {
                let slice = Array(logits[(mask * size)..<((mask + 1) * size)])
                scores.append(try stabilityScore(logits: slice, width: file.width, height: file.height,
                                                 maskThreshold: c.mask_threshold, thresholdOffset: c.threshold_offset))
                let counts = try slice.withUnsafeBufferPointer {
                    try stabilityCounts(logits: $0, width: file.width, height: file.height,
                                        maskThreshold: c.mask_threshold, thresholdOffset: c.threshold_offset)
                }
                intersections.append(Int(counts.intersections))
                unions.append(Int(counts.unions))
            }
            let batch = try logits.withUnsafeBufferPointer {
                try stabilityScores(logits: $0, maskCount: file.count, width: file.width, height: file.height,
                                    maskThreshold: c.mask_threshold, thresholdOffset: c.threshold_offset)
            }
            let context = "threshold \(c.mask_threshold) offset \(c.threshold_offset)"
            expectEqualElements(batch, c.scores_bits.map { Float(bits: $0) }, context + " batched scores", equal: Self.same)
            expectEqualElements(intersections, c.intersections, context + " intersections")
            expectEqualElements(unions, c.unions, context + " unions")
            expectEqualElements(scores, c.scores_bits.map { Float(bits: $0) }, context + " scores", equal: Self.same)
        }
    }

    @Test("thresholding equals logits > mask_threshold in float32")
    func thresholding() throws {
        let file = try Fixtures.json("stability.json", as: File.self)
        let logits = try Fixtures.npy("stability_logits.npy").float32()
        let binary = try Fixtures.npy("stability_binary.npy").uint8()
        let size = file.height * file.width
        for (t, threshold) in file.binary_thresholds.enumerated() {
            for mask in 0..<file.count {
                let slice = Array(logits[(mask * size)..<((mask + 1) * size)])
                let thresholded = try BinaryMask(thresholding: slice, width: file.width, height: file.height, threshold: threshold)
                let start = (t * file.count + mask) * size
                expectEqualElements(thresholded.pixels, Array(binary[start..<(start + size)]), "threshold \(threshold) mask \(mask)")
            }
        }
    }

    @Test("rows wider than 32767 wrap their int16 sums as upstream's do")
    func wideRows() throws {
        let file = try Fixtures.json("stability.json", as: File.self)
        #expect(!file.wide_rows.isEmpty)
        for c in file.wide_rows {
            // make_amg_fixtures.py: ((x * 31 + y * 17) % 101 - 20) / 10 in float32.
            var logits = [Float]()
            logits.reserveCapacity(c.width * c.height)
            for y in 0..<c.height {
                for x in 0..<c.width { logits.append(Float((x * 31 + y * 17) % 101 - 20) / Float(10)) }
            }
            let score = try stabilityScore(logits: logits, width: c.width, height: c.height,
                                           maskThreshold: c.mask_threshold, thresholdOffset: c.threshold_offset)
            #expect(Self.same(score, Float(bits: c.score_bits)),
                    "\(c.width)x\(c.height) threshold \(c.mask_threshold) offset \(c.threshold_offset): \(score) vs \(Float(bits: c.score_bits))")
        }
    }

    @Test("size mismatches are errors")
    func mismatch() {
        #expect(throws: SAMEverythingError.self) {
            try stabilityScore(logits: [1, 2, 3], width: 2, height: 2, maskThreshold: 0, thresholdOffset: 1)
        }
        #expect(throws: SAMEverythingError.self) { try BinaryMask(thresholding: [1, 2, 3], width: 2, height: 2) }
    }
}
