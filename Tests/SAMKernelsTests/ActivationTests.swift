import Foundation
import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

@Suite("Activations and softmax")
struct ActivationTests {
    @Test("GELU at known points (exact erf form)")
    func geluKnownValues() {
        var x = FloatTensor(shape: [5], data: [1, -1, 0, 2, -3])
        Kernels.gelu(&x)
        // 0.5 * x * (1 + erf(x / sqrt 2)) evaluated in high precision.
        let expected = [0.8413447460685429, -0.15865525393145707, 0, 1.9544997361036416, -0.0040495341007015]
        // The kernel's erf fit and rounding (see Expected.gelu), around the known values.
        let bounds = [Float(1), -1, 0, 2, -3].map { Expected(exact: $0).gelu() }
        expectClose(x, zip(expected, bounds).map { Expected(value: $0, roundingVariance: 0, approximation: $1.tolerance) },
                    shape: [5], "gelu known points")
    }

    @Test("GELU on random inputs matches the float64 formula")
    func geluRandom() {
        var rng = SplitMix64(seed: 7)
        // Large enough to use several threads.
        var x = randomTensor([3, 40_001], in: -6...6, using: &rng)
        let expected = x.exact.map { $0.gelu() }
        Kernels.gelu(&x)
        expectClose(x, expected, shape: [3, 40_001], "gelu random")
    }

    @Test("GELU's vector erf stays within its measured bound on a dense grid")
    func geluDenseGrid() {
        // scripts/fit_erf.py measures the erf approximation at <= 4.6e-7 absolute; GELU scales
        // that by 0.5 * |x|, plus float rounding of the product (a few ulps of the result). The
        // other tests' GELU tolerances (Expected.gelu) rest on this bound.
        let count = 400_001
        var x = FloatTensor(shape: [count], data: (0..<count).map { Float(-10 + 20 * Double($0) / Double(count - 1)) })
        let input = x.data
        Kernels.gelu(&x)
        var worstExcess = -Double.infinity, worstAt: Float = 0
        for (v, got) in zip(input, x.data) {
            let d = Double(v), exact = 0.5 * d * (1 + erf(d / 2.0.squareRoot()))
            let bound = 0.5 * abs(d) * Expected.erfApproximation + 4 * Double(Float(exact).ulp)
            let excess = abs(Double(got) - exact) - bound
            if excess > worstExcess { worstExcess = excess; worstAt = v }
        }
        #expect(worstExcess <= 0, "gelu error exceeds its bound by \(worstExcess) at x = \(worstAt)")
    }

    @Test("sigmoid is within float rounding of 1 / (1 + e^-x)")
    func sigmoid() {
        var rng = SplitMix64(seed: 41)
        var x = randomTensor([3, 50], in: -20...20, using: &rng)
        let expected = x.data.map { v -> Expected in
            // expf within 1 ulp, then one addition and one division.
            Expected(exact: 1.0) / (Expected(exact: 1.0) + Expected(exact: -v).exp(withinULPs: 1))
        }
        Kernels.sigmoid(&x)
        expectClose(x, expected, shape: [3, 50], "sigmoid")
    }

    @Test("ReLU clamps negatives only")
    func relu() {
        var x = FloatTensor(shape: [2, 3], data: [-2, -0.0, 0.5, 3, -1e-7, 7])
        Kernels.relu(&x)
        #expect(x.data == [0, 0, 0.5, 3, 0, 7])
    }

    @Test("softmax's vector exp is within a few ulp on rows of every tail length", arguments: [1, 7, 8, 49, 196, 4101])
    func softmaxRowLengths(length: Int) {
        var rng = SplitMix64(seed: UInt64(length))
        // Spread wide enough that some terms are ~e^-80 and vanish next to the max.
        var x = randomTensor([5, length], in: -40...40, using: &rng)
        var expected: [Expected] = []
        for r in 0..<5 {
            let row = x.data[(r * length)..<((r + 1) * length)]
            let rowMax = row.max()!
            // x - max is one float subtraction in any float softmax: the reference takes that
            // rounded argument as given, so the tolerance is the exp's 2 ulp and the normalisation.
            let exps = row.map { Expected(exact: $0 - rowMax).exp(withinULPs: 2) }
            let sum = exps.reduce(Expected.zero, +)
            expected += exps.map { $0 / sum }
        }
        Kernels.softmaxLastDim(&x)
        expectClose(x, expected, shape: [5, length], "softmax length \(length)")
    }

    @Test("softmax over the last dim is stable and matches the reference")
    func softmax() {
        var rng = SplitMix64(seed: 8)
        var x = randomTensor([3, 4, 17], in: -5...5, using: &rng)
        // Logits this large overflow expf without the max subtraction.
        for j in 0..<17 { x.data[j] += 1000 }
        let input = x.exact
        var expected: [Expected] = []
        for r in 0..<(input.count / 17) {
            let row = input[(r * 17)..<((r + 1) * 17)]
            let rowMax = Expected(exact: row.map(\.value).max()!)
            let exps = row.map { ($0 - rowMax).exp(withinULPs: 2) }
            let sum = exps.reduce(Expected.zero, +)
            expected += exps.map { $0 / sum }
        }
        Kernels.softmaxLastDim(&x)
        expectClose(x, expected, shape: [3, 4, 17], "softmax")
    }
}

@Suite("Elementwise")
struct ElementwiseTests {
    @Test("add, add repeating, addBias and scale")
    func elementwise() {
        var rng = SplitMix64(seed: 9)
        // Big enough to take the parallel path, with an odd plane size.
        let shape = [2, 3, 151, 97]
        let a = randomTensor(shape, using: &rng), b = randomTensor(shape, using: &rng)
        let bias = FloatTensor(shape: [3], data: [0.25, -1.5, 4])

        var sum = a
        Kernels.add(&sum, b)
        expectClose(sum, zip(a.exact, b.exact).map { $0 + $1 }, shape: shape, "add")

        // A table of two planes, three times over a: the two parallel ranges split its second repeat.
        var repeated = a
        let table = FloatTensor(shape: [2 * 151 * 97], data: Array(b.data[0..<(2 * 151 * 97)]))
        Kernels.add(&repeated, repeating: table)
        expectClose(repeated, a.data.indices.map { Expected(exact: a.data[$0]) + Expected(exact: table.data[$0 % table.count]) },
                    shape: shape, "add repeating")

        var biased = a
        Kernels.addBias(&biased, channelBias: bias)
        let plane = 151 * 97
        let expectedBiased = a.data.indices.map { Expected(exact: a.data[$0]) + Expected(exact: bias.data[($0 / plane) % 3]) }
        expectClose(biased, expectedBiased, shape: shape, "addBias")

        var scaled = a
        Kernels.scale(&scaled, by: -0.3)
        expectClose(scaled, a.exact.map { $0 * Expected(exact: Float(-0.3)) }, shape: shape, "scale")
    }
}
