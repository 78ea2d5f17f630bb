import Foundation
import SAMKernels
import SAMTensor
import Testing

@Suite("Activations and softmax")
struct ActivationTests {
    @Test("GELU at known points (exact erf form)")
    func geluKnownValues() {
        var x = FloatTensor(shape: [5], data: [1, -1, 0, 2, -3])
        Kernels.gelu(&x)
        // 0.5 * x * (1 + erf(x / sqrt 2)) evaluated in high precision.
        let expected = [0.8413447460685429, -0.15865525393145707, 0, 1.9544997361036416, -0.0040495341007015]
        expectClose(x, expected, shape: [5], "gelu known points", tolerance: 1e-6)
    }

    @Test("GELU on random inputs matches the float64 formula")
    func geluRandom() {
        var rng = SeededGenerator(seed: 7)
        // Large enough to use several threads.
        var x = randomTensor([3, 40_001], in: -6...6, using: &rng)
        let expected = x.data.map { v -> Double in let d = Double(v); return 0.5 * d * (1 + erf(d / 2.0.squareRoot())) }
        Kernels.gelu(&x)
        expectClose(x, expected, shape: [3, 40_001], "gelu random")
    }

    @Test("ReLU clamps negatives only")
    func relu() {
        var x = FloatTensor(shape: [2, 3], data: [-2, -0.0, 0.5, 3, -1e-7, 7])
        Kernels.relu(&x)
        #expect(x.data == [0, 0, 0.5, 3, 0, 7])
    }

    @Test("softmax over the last dim is stable and matches the reference")
    func softmax() {
        var rng = SeededGenerator(seed: 8)
        var x = randomTensor([3, 4, 17], in: -5...5, using: &rng)
        // Logits this large overflow expf without the max subtraction.
        for j in 0..<17 { x.data[j] += 1000 }
        let input = x.doubles
        var expected = [Double](repeating: 0, count: input.count)
        for r in 0..<(input.count / 17) {
            let row = input[(r * 17)..<((r + 1) * 17)]
            let rowMax = row.max()!
            let exps = row.map { Foundation.exp($0 - rowMax) }
            let sum = exps.reduce(0, +)
            for j in 0..<17 { expected[r * 17 + j] = exps[j] / sum }
        }
        Kernels.softmaxLastDim(&x)
        expectClose(x, expected, shape: [3, 4, 17], "softmax", tolerance: 1e-6)
    }
}

@Suite("Elementwise")
struct ElementwiseTests {
    @Test("add, addBias and scale")
    func elementwise() {
        var rng = SeededGenerator(seed: 9)
        // Big enough to take the parallel path, with an odd plane size.
        let shape = [2, 3, 151, 97]
        let a = randomTensor(shape, using: &rng), b = randomTensor(shape, using: &rng)
        let bias = FloatTensor(shape: [3], data: [0.25, -1.5, 4])

        var sum = a
        Kernels.add(&sum, b)
        expectClose(sum, zip(a.data, b.data).map { Double($0) + Double($1) }, shape: shape, "add", tolerance: 1e-6)

        var biased = a
        Kernels.addBias(&biased, channelBias: bias)
        let plane = 151 * 97
        let expectedBiased = a.data.indices.map { Double(a.data[$0]) + Double(bias.data[($0 / plane) % 3]) }
        expectClose(biased, expectedBiased, shape: shape, "addBias", tolerance: 1e-6)

        var scaled = a
        Kernels.scale(&scaled, by: -0.3)
        expectClose(scaled, a.data.map { Double($0) * Double(Float(-0.3)) }, shape: shape, "scale", tolerance: 1e-6)
    }
}
