import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

@Suite("Normalization")
struct NormalizationTests {
    @Test("layerNorm over the last dim matches nn.LayerNorm", arguments: [[2, 3, 37], [5, 256], [1, 1]])
    func layerNorm(shape: [Int]) {
        var rng = SplitMix64(seed: 5)
        // An offset mean makes a one-pass variance formula lose precision.
        var x = randomTensor(shape, in: 2...6, using: &rng)
        let width = shape.last!
        let weight = randomTensor([width], using: &rng), bias = randomTensor([width], using: &rng)
        let eps: Float = 1e-5
        let input = x.doubles
        var expected = [Double](repeating: 0, count: input.count)
        for r in 0..<(input.count / width) {
            let row = input[(r * width)..<((r + 1) * width)]
            let mean = row.reduce(0, +) / Double(width)
            let variance = row.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(width)
            for j in 0..<width {
                expected[r * width + j] = (input[r * width + j] - mean) / (variance + Double(eps)).squareRoot()
                    * Double(weight.data[j]) + Double(bias.data[j])
            }
        }
        Kernels.layerNorm(&x, weight: weight, bias: bias, eps: eps)
        expectClose(x, expected, shape: shape, "layerNorm \(shape)")
    }

    @Test("layerNorm2d normalises over channels per pixel", arguments: [[2, 7, 5, 9], [1, 3, 23, 29]])
    func layerNorm2d(shape: [Int]) {
        var rng = SplitMix64(seed: 6)
        var x = randomTensor(shape, in: -3...1, using: &rng)
        let (batch, channels, pixels) = (shape[0], shape[1], shape[2] * shape[3])
        let weight = randomTensor([channels], using: &rng), bias = randomTensor([channels], using: &rng)
        let eps: Float = 1e-6
        let input = x.doubles
        var expected = [Double](repeating: 0, count: input.count)
        for n in 0..<batch {
            for p in 0..<pixels {
                let values = (0..<channels).map { input[(n * channels + $0) * pixels + p] }
                let mean = values.reduce(0, +) / Double(channels)
                let variance = values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(channels)
                for c in 0..<channels {
                    expected[(n * channels + c) * pixels + p] = (values[c] - mean) / (variance + Double(eps)).squareRoot()
                        * Double(weight.data[c]) + Double(bias.data[c])
                }
            }
        }
        Kernels.layerNorm2d(&x, weight: weight, bias: bias, eps: eps)
        expectClose(x, expected, shape: shape, "layerNorm2d \(shape)")
    }
}
