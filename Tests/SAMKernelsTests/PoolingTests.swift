import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

@Suite("Max pooling and resizes")
struct PoolingTests {
    /// (batch, height, width, row width, channels pooled, stride): odd sides fullSet the last row and
    /// column (floor mode), a channel range inside packed rows, stride 1 (a copy), 19 channels
    /// (two eight-channel vectors and three left over).
    static let poolShapes: [(Int, Int, Int, Int, Range<Int>, Int)] = [
        (2, 8, 6, 5, 0..<5, 2), (1, 7, 9, 12, 4..<8, 2), (3, 6, 6, 3, 1..<3, 3), (1, 4, 5, 2, 0..<2, 1),
        (2, 6, 5, 23, 3..<22, 2),
    ]

    @Test("maxPoolTokens takes each s x s block's maximum per channel, floor mode", arguments: poolShapes)
    func maxPool(batch: Int, height: Int, width: Int, rowWidth: Int, channels: Range<Int>, stride: Int) {
        var rng = SplitMix64(seed: 31)
        let x = randomTensor([batch, height * width, rowWidth], using: &rng)
        let pooled = Kernels.maxPoolTokens(x, height: height, width: width, stride: stride, channels: channels)
        let outHeight = height / stride, outWidth = width / stride
        var expected: [Float] = []
        for b in 0..<batch {
            for row in 0..<outHeight {
                for column in 0..<outWidth {
                    for c in channels {
                        var best = -Float.infinity
                        for i in 0..<stride {
                            for j in 0..<stride {
                                best = max(best, x.data[((b * height + row * stride + i) * width + column * stride + j) * rowWidth + c])
                            }
                        }
                        expected.append(best)
                    }
                }
            }
        }
        // A maximum is one of its inputs: no rounding at all.
        #expect(pooled == FloatTensor(shape: [batch, outHeight * outWidth, channels.count], data: expected))
    }

    @Test("maxPoolTokens passes NaN on, as torch's max pool does")
    func maxPoolNaN() {
        var x = FloatTensor(shape: [1, 4, 1], data: [1, 2, 3, 4])
        x.data[2] = .nan
        #expect(Kernels.maxPoolTokens(x, height: 2, width: 2, stride: 2).data[0].isNaN)
        // The same on the eight-channel vectors: a NaN in a later cell, in lanes 3 and 12.
        var wide = FloatTensor(shape: [1, 4, 16], data: (0..<64).map { Float($0 % 7) })
        wide.data[16 * 3 + 3] = .nan
        wide.data[16 * 1 + 12] = .nan
        let pooled = Kernels.maxPoolTokens(wide, height: 2, width: 2, stride: 2)
        #expect(pooled.data.enumerated().allSatisfy { c, value in (c == 3 || c == 12) == value.isNaN })
    }

    @Test("addUpsampledNearest adds every coarse pixel to its f x f block", arguments: [(2, 3, 4, 5, 2), (1, 2, 3, 3, 3)])
    func nearest(batch: Int, channels: Int, height: Int, width: Int, factor: Int) {
        var rng = SplitMix64(seed: 33)
        let coarse = randomTensor([batch, channels, height, width], using: &rng)
        let fine = randomTensor([batch, channels, height * factor, width * factor], using: &rng)
        var sum = fine
        Kernels.addUpsampledNearest(&sum, coarse)
        var expected = fine.data
        for plane in 0..<(batch * channels) {
            for row in 0..<(height * factor) {
                for column in 0..<(width * factor) {
                    expected[(plane * height * factor + row) * width * factor + column] +=
                        coarse.data[(plane * height + row / factor) * width + column / factor]
                }
            }
        }
        // One float addition per element, in the same order: bit for bit.
        #expect(sum.data == expected)
    }

    /// Values from torch 2.15: `F.interpolate(x, size, mode="bicubic")` with x[i] = sin(1.3 i + 0.2)
    /// (2x3 -> 5x4: up in both axes) and x[i] = cos(0.7 i) (3x4 -> 2x7: down in one, up in the other).
    static let torchBicubic: [(input: [Float], inShape: (Int, Int), outShape: (Int, Int), output: [Float])] = [
        ([0.19866932928562164, 0.9974949955940247, 0.33498814702033997, -0.81827712059021, -0.7727645039558411, 0.40484991669654846],
         (2, 3), (5, 4),
         [0.2474885880947113, 0.969953179359436, 0.9777109622955322, 0.2651713192462921, 0.06237579137086868, 0.6429429054260254,
          0.7489469051361084, 0.30399441719055176, -0.3401060402393341, -0.06805974245071411, 0.25155606865882874,
          0.38840556144714355, -0.7425883412361145, -0.7790631055831909, -0.24583525955677032, 0.4728167653083801,
          -0.9277011156082153, -1.106073021888733, -0.4745989739894867, 0.5116400718688965]),
        ([1.0, 0.7648422122001648, 0.1699671447277069, -0.5048460960388184, -0.9422223567962646, -0.9364566802978516,
          -0.4902608096599579, 0.18651236593723297, 0.7755658626556396, 0.9998586177825928, 0.7539022564888, 0.1533738672733307],
         (3, 4), (2, 7),
         [0.5182526111602783, 0.45600900053977966, 0.33754849433898926, 0.1566779464483261, -0.05733538046479225,
          -0.2573317885398865, -0.37916049361228943, 0.29991665482521057, 0.38377144932746887, 0.49329280853271484,
          0.5169752836227417, 0.4313000440597534, 0.2717840373516083, 0.15903164446353912]),
    ]

    @Test("resizeBicubic lands within float32 rounding of torch's bicubic", arguments: 0..<2)
    func bicubicMatchesTorch(index: Int) {
        let case_ = Self.torchBicubic[index]
        let x = FloatTensor(shape: [1, 1, case_.inShape.0, case_.inShape.1], data: case_.input)
        let y = Kernels.resizeBicubic(x, height: case_.outShape.0, width: case_.outShape.1)
        #expect(y.shape == [1, 1, case_.outShape.0, case_.outShape.1])
        // torch evaluates the 16-tap sum in float32, values below ~1.5: its own rounding is a few
        // ulps (measured worst 4.8e-7 here), so 2e-6 separates rounding from a wrong tap or weight (>1e-2).
        let worst = zip(y.data, case_.output).map { abs($0 - $1) }.max() ?? 0
        print("[bicubic vs torch, case \(index)] max abs \(worst)")
        #expect(worst < 2e-6, "max abs difference \(worst)")
    }

    @Test("resizeBicubic keeps constants and is the identity at the same size")
    func bicubicProperties() {
        let constant = FloatTensor(shape: [2, 1, 3, 5], data: [Float](repeating: 0.625, count: 15) + [Float](repeating: -2, count: 15))
        let resized = Kernels.resizeBicubic(constant, height: 7, width: 11)
        // The four weights sum to 1 in exact arithmetic; float64 leaves ~1e-16.
        #expect(resized.data.prefix(77).allSatisfy { abs($0 - 0.625) < 1e-6 })
        #expect(resized.data.suffix(77).allSatisfy { abs($0 + 2) < 1e-6 })
        var rng = SplitMix64(seed: 34)
        let x = randomTensor([1, 2, 4, 6], using: &rng)
        // t = 0 gives the weights (0, 1, 0, 0): every output is its input exactly.
        #expect(Kernels.resizeBicubic(x, height: 4, width: 6) == x)
    }
}
