import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

@Suite("Linear")
struct LinearTests {
    /// out[r, o] = sum_i x[r, i] * weight[o, i] + bias[o]
    static func reference(_ x: FloatTensor, _ weight: FloatTensor, _ bias: FloatTensor?) -> [Expected] {
        let inFeatures = weight.shape[1], outFeatures = weight.shape[0]
        let rows = x.count / inFeatures
        var out = [Expected](repeating: .zero, count: rows * outFeatures)
        for r in 0..<rows {
            for o in 0..<outFeatures {
                var sum = bias.map { Expected(exact: $0.data[o]) } ?? .zero
                for i in 0..<inFeatures {
                    sum += Expected(exact: x.data[r * inFeatures + i]) * Expected(exact: weight.data[o * inFeatures + i])
                }
                out[r * outFeatures + o] = sum
            }
        }
        return out
    }

    @Test("linear with bias over [2, 3, 5] -> [2, 3, 7]")
    func withBias() {
        var rng = SplitMix64(seed: 1)
        let x = randomTensor([2, 3, 5], using: &rng)
        let weight = randomTensor([7, 5], using: &rng)
        let bias = randomTensor([7], using: &rng)
        let out = Kernels.linear(x, weight: weight, bias: bias)
        expectClose(out, Self.reference(x, weight, bias), shape: [2, 3, 7], "linear bias")
    }

    @Test("linear without bias, single row, wide input")
    func withoutBias() {
        var rng = SplitMix64(seed: 2)
        let x = randomTensor([1, 257], using: &rng)
        let weight = randomTensor([3, 257], using: &rng)
        let out = Kernels.linear(x, weight: weight, bias: nil)
        expectClose(out, Self.reference(x, weight, nil), shape: [1, 3], "linear no bias")
    }

    @Test("linear uses weight as [out, in], not [in, out]")
    func layout() {
        // x = [1, 2], weight rows are output features: out = [1*1 + 2*0, 1*3 + 2*4] = [1, 11].
        let x = FloatTensor(shape: [1, 2], data: [1, 2])
        let weight = FloatTensor(shape: [2, 2], data: [1, 0, 3, 4])
        let out = Kernels.linear(x, weight: weight, bias: FloatTensor(shape: [2], data: [0.5, -1]))
        #expect(out.data == [1.5, 10])
    }
}
