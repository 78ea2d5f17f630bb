import Foundation
import SAMImage
import SAMTestSupport
import Testing

/// torch's antialiased bilinear resize (SAM 2's image transform) against the filter written out in float64.
@Suite("Antialiased bilinear resize")
struct AntialiasedBilinearTests {
    /// The triangle filter stretched by the scale when shrinking, weights normalised, in float64:
    /// out[i] = Σ w(j) x[j] / Σ w(j), w(j) = max(0, 1 - |j + 0.5 - center| / s), center = scale (i + 0.5),
    /// s = max(scale, 1), over the inputs within s of the center.
    static func reference(_ x: [Double], outSize: Int) -> [Double] {
        let scale = Double(x.count) / Double(outSize), support = max(scale, 1)
        return (0..<outSize).map { i in
            let center = scale * (Double(i) + 0.5)
            var sum = 0.0, total = 0.0
            for j in x.indices {
                let w = max(0, 1 - abs(Double(j) + 0.5 - center) / support)
                sum += w * x[j]
                total += w
            }
            return sum / total
        }
    }

    @Test("each axis matches the float64 filter, shrinking and growing", arguments: [(17, 6), (6, 17), (9, 9), (40, 13), (3, 1)])
    func oneAxis(inSize: Int, outSize: Int) {
        var rng = SplitMix64(seed: UInt64(inSize * 100 + outSize))
        let row = (0..<inSize).map { _ in Float.random(in: 0...1, using: &rng) }
        let resized = AntialiasedBilinear.resize(row, count: 1, height: 1, width: inSize, toHeight: 1, width: outSize)
        let expected = Self.reference(row.map(Double.init), outSize: outSize)
        let worst = zip(resized, expected).map { abs(Double($0) - $1) }.max() ?? 0
        // A normalised sum of at most ~2 * scale + 2 products of values in [0, 1], in float: a few ulp.
        #expect(worst < 1e-6, "max abs \(worst)")
        // Columns go through the same weights.
        let column = AntialiasedBilinear.resize(row, count: 1, height: inSize, width: 1, toHeight: outSize, width: 1)
        #expect(column == resized)
    }

    @Test("width first, then height: the 2-D resize is the two passes")
    func separable() {
        var rng = SplitMix64(seed: 7)
        let planes = (0..<(2 * 11 * 14)).map { _ in Float.random(in: 0...1, using: &rng) }
        let both = AntialiasedBilinear.resize(planes, count: 2, height: 11, width: 14, toHeight: 5, width: 8)
        let widthFirst = AntialiasedBilinear.resize(planes, count: 2, height: 11, width: 14, toHeight: 11, width: 8)
        #expect(both == AntialiasedBilinear.resize(widthFirst, count: 2, height: 11, width: 8, toHeight: 5, width: 8))
    }
}
