import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

@Suite("Normalization")
struct NormalizationTests {
    /// nn.LayerNorm over one group of values: the two-pass mean and variance PyTorch computes.
    static func layerNormReference(_ values: [Expected], weight: [Float], bias: [Float], eps: Float) -> [Expected] {
        let count = Expected(exact: Double(values.count))
        let mean = values.reduce(Expected.zero, +) / count
        let centred = values.map { $0 - mean }
        let variance = centred.reduce(Expected.zero) { $0 + $1 * $1 } / count
        let deviation = (variance + Expected(exact: eps)).squareRoot()
        return centred.indices.map { centred[$0] / deviation * Expected(exact: weight[$0]) + Expected(exact: bias[$0]) }
    }

    /// LayerNorm2d: the same over the channels of each pixel of an NCHW map.
    static func layerNorm2dReference(_ x: [Expected], shape: [Int], weight: FloatTensor, bias: FloatTensor,
                                     eps: Float) -> [Expected] {
        let (batch, channels, pixels) = (shape[0], shape[1], shape[2] * shape[3])
        var out = x
        for n in 0..<batch {
            for p in 0..<pixels {
                let index = { (c: Int) in (n * channels + c) * pixels + p }
                let normed = layerNormReference((0..<channels).map { x[index($0)] }, weight: weight.data, bias: bias.data, eps: eps)
                for c in 0..<channels { out[index(c)] = normed[c] }
            }
        }
        return out
    }

    @Test("layerNorm over the last dim matches nn.LayerNorm", arguments: [[2, 3, 37], [5, 256], [1, 1]])
    func layerNorm(shape: [Int]) {
        var rng = SplitMix64(seed: 5)
        // An offset mean makes a one-pass variance formula lose precision (beyond this tolerance).
        var x = randomTensor(shape, in: 2...6, using: &rng)
        let width = shape.last!
        let weight = randomTensor([width], using: &rng), bias = randomTensor([width], using: &rng)
        let eps: Float = 1e-5
        let input = x.exact
        var expected: [Expected] = []
        for r in 0..<(input.count / width) {
            expected += Self.layerNormReference(Array(input[(r * width)..<((r + 1) * width)]), weight: weight.data,
                                                bias: bias.data, eps: eps)
        }
        Kernels.layerNorm(&x, weight: weight, bias: bias, eps: eps)
        expectClose(x, expected, shape: shape, "layerNorm \(shape)")
    }

    /// The decoder's norm4 gives the next attention keys + key_pe from the same pass: it must be
    /// the plain norm, then the plain elementwise sum, to the bit (rows of 37 leave a scalar tail;
    /// 4096 rows of 256 split over the workers).
    @Test("layerNorm returning x + addend equals layerNorm then sum, bit for bit", arguments: [[2, 3, 37], [1, 4096, 256]])
    func layerNormWithSum(shape: [Int]) {
        var rng = SplitMix64(seed: 6)
        let x = randomTensor(shape, in: -3...5, using: &rng), addend = randomTensor(shape, using: &rng)
        let width = shape.last!
        let weight = randomTensor([width], using: &rng), bias = randomTensor([width], using: &rng)
        var fused = x, plain = x
        let sum = Kernels.layerNorm(&fused, weight: weight, bias: bias, eps: 1e-5, returningSumWith: addend)
        Kernels.layerNorm(&plain, weight: weight, bias: bias, eps: 1e-5)
        #expect(fused.isBitwiseEqual(to: plain))
        #expect(sum.isBitwiseEqual(to: Kernels.sum(plain, addend)))
    }

    @Test("layerNorm2d normalises over channels per pixel", arguments: [[2, 7, 5, 9], [1, 3, 23, 29]])
    func layerNorm2d(shape: [Int]) {
        var rng = SplitMix64(seed: 6)
        var x = randomTensor(shape, in: -3...1, using: &rng)
        let weight = randomTensor([shape[1]], using: &rng), bias = randomTensor([shape[1]], using: &rng)
        let eps: Float = 1e-6
        let expected = Self.layerNorm2dReference(x.exact, shape: shape, weight: weight, bias: bias, eps: eps)
        Kernels.layerNorm2d(&x, weight: weight, bias: bias, eps: eps)
        expectClose(x, expected, shape: shape, "layerNorm2d \(shape)")
    }
}
