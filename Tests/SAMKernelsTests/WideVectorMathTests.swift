import CVectorMath
import SAMTestSupport
import Testing

/// Only on CPUs with AVX-512: elsewhere the sixteen-lane functions never run, and there is nothing to compare.
@Suite("Sixteen-lane vector math", .enabled(if: sam_vector_math_has_avx512() != 0, "this CPU has no AVX-512"))
struct WideVectorMathTests {
    /// Kernels.exp8's recipe on one float, with its multiply-adds fused as the SAM_FMA build
    /// fuses them: the value every lane of either width must give, bit for bit.
    static func fusedExp(_ x: Float) -> Float {
        let x = -87 > x ? -87 : x
        let roundingMagic: Float = 12_582_912
        let shifted = roundingMagic.addingProduct(x, 1.442_695_04)
        let n = shifted - roundingMagic
        let r = x.addingProduct(n, -0.693_145_751_953_125).addingProduct(n, -1.428_606_765_330_187e-6)
        var p: Float = 1.0 / 5040
        for c: Float in [1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1, 1] { p = c.addingProduct(p, r) }
        let integer = Int32(bitPattern: shifted.bitPattern) &- Int32(bitPattern: roundingMagic.bitPattern)
        return p * Float(bitPattern: UInt32(bitPattern: (integer &+ 127) &<< 23))
    }

    @Test("sixteen-lane exp equals the fused eight-lane recipe bit for bit, sums lane by lane",
          arguments: [8, 16, 24, 200, 4096, 4104])
    func exponentiateMatchesRecipe(count: Int) {
        var rng = SplitMix64(seed: UInt64(count))
        // Below -87 (the clamp), around 0 and the rounding ties of x / ln 2 are all in range.
        var row = (0..<count).map { _ in Float(Double(rng.next() % 2_000_001) / 1e4 - 100) }
        let shift: Float = 3.25
        let expected = row.map { Self.fusedExp($0 - shift) }
        var expectedSums = [Float](repeating: 0, count: 8)
        for (j, e) in expected.enumerated() { expectedSums[j % 8] += e }
        var sums = [Float](repeating: .nan, count: 8)
        sam_exponentiate_avx512(&row, Int64(count), shift, &sums)
        #expect(row.map(\.bitPattern) == expected.map(\.bitPattern))
        #expect(sums.map(\.bitPattern) == expectedSums.map(\.bitPattern))
    }

    /// Kernels.gelu8's recipe (erf8's fit with fused multiply-adds) on one float.
    static func fusedGELU(_ v: Float) -> Float {
        let limit: Float = 3.925
        var x = v * 0.707_106_781_186_547_5
        x = x > limit ? limit : x
        x = x < -limit ? -limit : x
        let t = x * x
        var p: Float = -1.336_374_3e-8
        for c: Float in [4.723_054_2e-6, 3.805_648_3e-4, 3.832_968_2e-3, 5.428_285_2e-2, 1.847_018_0e-1, 1.128_379_2] {
            p = c.addingProduct(p, t)
        }
        var q: Float = 6.346_836_0e-5
        for c: Float in [1.305_406_7e-3, 1.543_281_6e-2, 1.137_797_6e-1, 4.970_212_6e-1, 1] { q = c.addingProduct(q, t) }
        return 0.5 * v * (1 + x * p / q)
    }

    @Test("sixteen-lane GELU equals the fused eight-lane recipe bit for bit", arguments: [8, 16, 40, 1000])
    func geluMatchesRecipe(count: Int) {
        var rng = SplitMix64(seed: UInt64(count) + 99)
        // Past both clamps (±3.925 * sqrt 2) and through zero.
        var values = (0..<count).map { _ in Float(Double(rng.next() % 2_000_001) / 1e5 - 10) }
        let expected = values.map(Self.fusedGELU)
        sam_gelu_avx512(&values, Int64(count))
        #expect(values.map(\.bitPattern) == expected.map(\.bitPattern))
    }

    @Test("sixteen-lane GELU on NaN, infinities, signed zeros and the clamps' edges: as the recipe")
    func geluSpecialValues() {
        let edge: Float = 3.925 / 0.707_106_781_186_547_5
        var values: [Float] = [.nan, .infinity, -.infinity, 0, -0.0, edge, -edge, edge.nextUp, (-edge).nextDown,
                               .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude, 1, -1, .nan, 2]
        let expected = values.map(Self.fusedGELU)
        sam_gelu_avx512(&values, Int64(values.count))
        for (got, want) in zip(values, expected) {
            #expect(got.isNaN ? want.isNaN : got.bitPattern == want.bitPattern, "\(got) against \(want)")
        }
    }

    /// Kernels.geluTanh8's recipe on one float: x * σ(2u) from e = e^-|2u| (fusedExp), fused multiply-adds.
    static func fusedGELUTanh(_ x: Float) -> Float {
        let inner = x.addingProduct(x * x * x, 0.044_715)
        let z = 2 * Float(0.797_884_560_802_865_4) * inner
        let magnitude = z < 0 ? -z : z
        let e = magnitude > 87 ? 0 : fusedExp(-magnitude)
        return x * ((z < 0 ? e : 1) / (1 + e))
    }

    @Test("sixteen-lane tanh GELU equals the fused eight-lane recipe bit for bit", arguments: [8, 16, 40, 1000])
    func geluTanhMatchesRecipe(count: Int) {
        var rng = SplitMix64(seed: UInt64(count) + 199)
        // Through zero (both signs of it), and far enough out that |2u| passes 87 on both sides.
        var values = (0..<count).map { _ in Float(Double(rng.next() % 2_000_001) / 1e5 - 10) }
        values[0] = -0.0
        values[count - 1] = count > 8 ? -12 : 0
        let expected = values.map(Self.fusedGELUTanh)
        sam_gelu_tanh_avx512(&values, Int64(count))
        #expect(values.map(\.bitPattern) == expected.map(\.bitPattern))
    }

    @Test("sixteen-lane maximum and scaling equal the scalar ones", arguments: [8, 16, 24, 4104])
    func maximumAndScale(count: Int) {
        var rng = SplitMix64(seed: UInt64(count) + 7)
        var row = (0..<count).map { _ in Float(Double(rng.next() % 2_000_001) / 1e3 - 1000) }
        // The largest in the last eight (the half-vector tail) once, elsewhere otherwise.
        row[count - 3] = count == 24 ? 5000 : row[count - 3]
        #expect(sam_maximum_avx512(row, Int64(count)) == row.max()!)
        let factor: Float = 0.123_456_7
        let expected = row.map { $0 * factor }
        sam_scale_avx512(&row, Int64(count), factor)
        #expect(row.map(\.bitPattern) == expected.map(\.bitPattern))
    }

    @Test("sixteen-lane maximum: the largest wherever it is (each of the four chains, the tails); NaN never wins",
          arguments: [8, 24, 64, 72, 88, 136, 4104])
    func maximumInEveryChain(count: Int) {
        var rng = SplitMix64(seed: UInt64(count) + 11)
        let row = (0..<count).map { _ in Float(Double(rng.next() % 2_000_001) / 1e3 - 1000) }
        for position in Set([0, 15, 16, 33, 50, 63, 64, 79, count - 9, count - 8, count - 1]) where position >= 0 && position < count {
            var placed = row
            placed[position] = 1500
            #expect(sam_maximum_avx512(placed, Int64(count)) == 1500, "largest at \(position) of \(count)")
            placed[(position + 1) % count] = .nan
            #expect(sam_maximum_avx512(placed, Int64(count)) == 1500, "NaN beside it at \((position + 1) % count)")
        }
    }

    @Test("relative-position softmax numerators: the largest score with its positions gives exactly 1, none more",
          arguments: [(64, 64), (14, 14), (13, 19), (4, 80)])
    func relativeSoftmaxLargest(gridHeight: Int, gridWidth: Int) {
        var rng = SplitMix64(seed: UInt64(gridHeight * 100 + gridWidth))
        func random(_ count: Int, _ scale: Double) -> [Float] {
            (0..<count).map { _ in Float(Double(rng.next() % 2_000_001) / 1e6 - 1) * Float(scale) }
        }
        let scores = random(gridHeight * gridWidth, 8), heights = random(gridHeight, 2), widths = random(gridWidth, 2)
        for key in Set([0, 17, 35, 50, gridWidth - 1, gridHeight * gridWidth / 2, gridHeight * gridWidth - 1]) {
            var row = scores
            row[key] = 40
            let inverseSum = sam_relative_softmax_numerators_avx512(&row, heights, widths, Int64(gridHeight), Int64(gridWidth))
            #expect(row[key] == 1, "key \(key) of \(gridHeight)x\(gridWidth): \(row[key])")
            #expect(row.allSatisfy { $0 <= 1 && $0 >= 0 })
            #expect(abs(inverseSum * row.reduce(0, +) - 1) < 1e-5)
        }
    }

    /// (rows, depth, columns): the decoder's shapes (16-dim heads over 4096 or a few dozen keys,
    /// 16-wide values) with every column path (32, 16 and 8 wide) and row tails of the six-row blocks.
    static let productShapes = [(13, 16, 4104), (6, 16, 24), (5, 22, 16), (1, 4096, 16), (7, 3, 40)]

    @Test("sixteen-lane rows product equals the fused eight-lane recipe bit for bit", arguments: productShapes)
    func rowsProductMatchesRecipe(_ shape: (Int, Int, Int)) {
        let (rows, depth, columns) = shape
        var rng = SplitMix64(seed: UInt64(rows * 1000 + columns))
        let (aStride, bStride, outStride) = (depth + 3, columns + 5, columns + 2)
        let a = (0..<(rows * aStride)).map { _ in Float(Double(rng.next() % 2_000_001) / 1e6 - 1) }
        let b = (0..<(depth * bStride)).map { _ in Float(Double(rng.next() % 2_000_001) / 1e6 - 1) }
        let scales = (0..<rows).map { _ in Float(Double(rng.next() % 1000 + 1) / 997) }
        for scaleStride in [0, 1] {
            var expected = [Float](repeating: -7, count: rows * outStride)
            for r in 0..<rows {
                for c in 0..<columns {
                    var sum: Float = 0
                    for t in 0..<depth { sum = sum.addingProduct(a[r * aStride + t], b[t * bStride + c]) }
                    expected[r * outStride + c] = scales[r * scaleStride] * sum
                }
            }
            var out = [Float](repeating: -7, count: rows * outStride)
            sam_rows_product_avx512(a, Int64(aStride), Int64(rows), Int64(depth), b, Int64(bStride), Int64(columns),
                                    scales, Int64(scaleStride), &out, Int64(outStride))
            // Every product element, and nothing between rows written.
            #expect(out.map(\.bitPattern) == expected.map(\.bitPattern), "scale stride \(scaleStride)")
        }
    }
}
