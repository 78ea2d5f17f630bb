/// Two sets of masks of one image compared as sets: pairs matched one to one by IoU (the highest IoU
/// first, each mask in at most one pair), the fraction of each side matched at `threshold`, the IoU
/// of every matched pair, and the masks left unmatched on each side. How segment-everything outputs
/// are verified: the order and count of masks may differ slightly, the masks must not.
package struct MaskSetComparison: Sendable, Equatable {
    package struct Pair: Sendable, Equatable {
        /// Index in the first (native) and the second (reference) list.
        package var native: Int
        package var reference: Int
        package var iou: Double
    }

    /// Pairs with IoU at or above the threshold, highest first.
    package var matched: [Pair]
    package var unmatchedNative: [Int]
    package var unmatchedReference: [Int]
    package var nativeCount: Int
    package var referenceCount: Int
    package var threshold: Double

    /// Fraction of the native masks in a pair (1 when there are none on either side).
    package var nativeMatchedFraction: Double { nativeCount == 0 ? (referenceCount == 0 ? 1 : 0) : Double(matched.count) / Double(nativeCount) }
    /// Fraction of the reference masks in a pair.
    package var referenceMatchedFraction: Double {
        referenceCount == 0 ? (nativeCount == 0 ? 1 : 0) : Double(matched.count) / Double(referenceCount)
    }

    /// Compares `native` with `reference` (binary masks of one size, decoded from each side's counts).
    /// Greedy on IoU: every pair of overlapping masks is scored, then pairs are taken from the highest
    /// IoU down while both masks are free; ties go to the lower indices.
    package init(native: [BinaryMask], reference: [BinaryMask], threshold: Double = 0.95) {
        nativeCount = native.count
        referenceCount = reference.count
        self.threshold = threshold
        let left = native.map(PackedMask.init), right = reference.map(PackedMask.init)
        var candidates: [Pair] = []
        for (i, a) in left.enumerated() {
            // Boxes apart: IoU 0 (two empty masks are the same mask).
            for (j, b) in right.enumerated() where PackedMask.overlap(a, b) {
                let iou = a.iou(b)
                if iou >= threshold { candidates.append(Pair(native: i, reference: j, iou: iou)) }
            }
        }
        candidates.sort { ($0.iou, -$0.native, -$0.reference) > ($1.iou, -$1.native, -$1.reference) }
        var usedNative = Set<Int>(), usedReference = Set<Int>()
        var matched: [Pair] = []
        for pair in candidates where !usedNative.contains(pair.native) && !usedReference.contains(pair.reference) {
            usedNative.insert(pair.native)
            usedReference.insert(pair.reference)
            matched.append(pair)
        }
        self.matched = matched
        unmatchedNative = native.indices.filter { !usedNative.contains($0) }
        unmatchedReference = reference.indices.filter { !usedReference.contains($0) }
    }

    /// The matched pairs' IoU at the given quantiles (0 = lowest), for a report.
    package func iouQuantiles(_ quantiles: [Double] = [0, 0.05, 0.5]) -> [Double] {
        let values = matched.map(\.iou).sorted()
        guard !values.isEmpty else { return quantiles.map { _ in .nan } }
        return quantiles.map { values[min(values.count - 1, Int(($0 * Double(values.count - 1)).rounded()))] }
    }
}

/// A mask as 64-bit words plus its set-pixel box and count, for fast intersections.
private struct PackedMask {
    var words: [UInt64]
    var count: Int
    var box: (x0: Int, y0: Int, x1: Int, y1: Int)

    init(_ mask: BinaryMask) {
        words = [UInt64](repeating: 0, count: (mask.pixels.count + 63) / 64)
        var count = 0
        var box = (x0: Int.max, y0: Int.max, x1: -1, y1: -1)
        for (index, value) in mask.pixels.enumerated() where value != 0 {
            words[index >> 6] |= 1 << UInt64(index & 63)
            count += 1
            let x = index % mask.width, y = index / mask.width
            box = (min(box.x0, x), min(box.y0, y), max(box.x1, x), max(box.y1, y))
        }
        self.count = count
        self.box = box
    }

    func iou(_ other: PackedMask) -> Double {
        var intersection = 0
        for index in words.indices { intersection += (words[index] & other.words[index]).nonzeroBitCount }
        let union = count + other.count - intersection
        return union == 0 ? 1 : Double(intersection) / Double(union)
    }
}

private extension PackedMask {
    static func overlap(_ a: PackedMask, _ b: PackedMask) -> Bool {
        if a.count == 0 || b.count == 0 { return a.count == b.count }
        return a.box.x0 <= b.box.x1 && b.box.x0 <= a.box.x1 && a.box.y0 <= b.box.y1 && b.box.y0 <= a.box.y1
    }
}
