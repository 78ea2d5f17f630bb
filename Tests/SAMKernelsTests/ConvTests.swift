import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

/// One conv2d case: input shape, output channels, kernel size, stride, padding, groups.
struct ConvCase: CustomTestStringConvertible, Sendable {
    let name: String
    let input: [Int]            // [N, C, H, W]
    let outChannels: Int
    let kernel: (Int, Int)
    let stride: Int
    let padding: Int
    let groups: Int
    var hasBias = true
    var testDescription: String { name }
}

@Suite("Conv2d")
struct ConvTests {
    /// Direct definition: out[n, o, y, x] = bias[o] + sum over the group's channels and taps.
    static func reference(_ x: FloatTensor, _ weight: FloatTensor, _ bias: FloatTensor?,
                          stride: Int, padding: Int, groups: Int) -> (values: [Expected], shape: [Int]) {
        reference(x.exact, shape: x.shape, weight, bias, stride: stride, padding: padding, groups: groups)
    }

    /// The same on inputs that carry errors of their own (the output of an earlier layer).
    static func reference(_ x: [Expected], shape: [Int], _ weight: FloatTensor, _ bias: FloatTensor?,
                          stride: Int, padding: Int, groups: Int) -> (values: [Expected], shape: [Int]) {
        let (batch, channels, height, width) = (shape[0], shape[1], shape[2], shape[3])
        let (outChannels, groupChannels, kh, kw) = (weight.shape[0], weight.shape[1], weight.shape[2], weight.shape[3])
        let outHeight = (height + 2 * padding - kh) / stride + 1
        let outWidth = (width + 2 * padding - kw) / stride + 1
        let outPerGroup = outChannels / groups
        var out = [Expected](repeating: .zero, count: batch * outChannels * outHeight * outWidth)
        for n in 0..<batch {
            for o in 0..<outChannels {
                let group = o / outPerGroup
                for oy in 0..<outHeight {
                    for ox in 0..<outWidth {
                        var sum = bias.map { Expected(exact: $0.data[o]) } ?? .zero
                        for gc in 0..<groupChannels {
                            let c = group * groupChannels + gc
                            for i in 0..<kh {
                                for j in 0..<kw {
                                    let iy = oy * stride - padding + i, ix = ox * stride - padding + j
                                    if iy < 0 || iy >= height || ix < 0 || ix >= width { continue }
                                    let xv = x[((n * channels + c) * height + iy) * width + ix]
                                    let wv = Expected(exact: weight.data[((o * groupChannels + gc) * kh + i) * kw + j])
                                    sum += xv * wv
                                }
                            }
                        }
                        out[((n * outChannels + o) * outHeight + oy) * outWidth + ox] = sum
                    }
                }
            }
        }
        return (out, [batch, outChannels, outHeight, outWidth])
    }

    static let cases: [ConvCase] = [
        ConvCase(name: "1x1 pointwise (sgemm path)", input: [2, 5, 7, 9], outChannels: 6, kernel: (1, 1), stride: 1, padding: 0, groups: 1),
        ConvCase(name: "1x1 pointwise without bias", input: [1, 3, 4, 5], outChannels: 2, kernel: (1, 1), stride: 1, padding: 0, groups: 1, hasBias: false),
        // Large enough for tiles of 208 pixels (the last 144), in parallel, each one sgemm or panel product.
        ConvCase(name: "1x1 C=12 -> 301 on 40x40 (tiles of pixels)", input: [1, 12, 40, 40], outChannels: 301, kernel: (1, 1), stride: 1, padding: 0, groups: 1),
        // Eight tiles of 1024 pixels without a bias, as the ViT necks' convolutions.
        ConvCase(name: "1x1 C=9 -> 64 on 64x128 without bias (tiles of pixels)", input: [1, 9, 64, 128], outChannels: 64, kernel: (1, 1), stride: 1, padding: 0, groups: 1, hasBias: false),
        ConvCase(name: "1x1 stride 2 (im2col path)", input: [1, 4, 7, 9], outChannels: 3, kernel: (1, 1), stride: 2, padding: 0, groups: 1),
        ConvCase(name: "3x3 stride 2 pad 1", input: [2, 3, 7, 9], outChannels: 4, kernel: (3, 3), stride: 2, padding: 1, groups: 1),
        ConvCase(name: "3x3 stride 1 pad 1 no bias", input: [1, 5, 7, 9], outChannels: 3, kernel: (3, 3), stride: 1, padding: 1, groups: 1, hasBias: false),
        ConvCase(name: "non-square 2x3 kernel stride 2 pad 2", input: [1, 3, 8, 11], outChannels: 5, kernel: (2, 3), stride: 2, padding: 2, groups: 1),
        ConvCase(name: "16x16 stride 16 patch embedding", input: [1, 3, 32, 48], outChannels: 4, kernel: (16, 16), stride: 16, padding: 0, groups: 1),
        ConvCase(name: "grouped, 2 groups", input: [2, 4, 7, 9], outChannels: 6, kernel: (3, 3), stride: 1, padding: 1, groups: 2),
        ConvCase(name: "depthwise channel multiplier 2 (generic groups)", input: [1, 3, 7, 9], outChannels: 6, kernel: (3, 3), stride: 2, padding: 1, groups: 3),
        ConvCase(name: "depthwise 3x3 stride 1 pad 1", input: [2, 5, 7, 9], outChannels: 5, kernel: (3, 3), stride: 1, padding: 1, groups: 5),
        ConvCase(name: "depthwise 3x3 stride 2 pad 1", input: [2, 5, 7, 9], outChannels: 5, kernel: (3, 3), stride: 2, padding: 1, groups: 5),
        ConvCase(name: "depthwise 3x3 stride 2 pad 1 even size", input: [1, 3, 8, 10], outChannels: 3, kernel: (3, 3), stride: 2, padding: 1, groups: 3),
        ConvCase(name: "depthwise 3x3 stride 1 pad 0", input: [1, 4, 7, 9], outChannels: 4, kernel: (3, 3), stride: 1, padding: 0, groups: 4),
        ConvCase(name: "depthwise 3x3 stride 1 pad 2", input: [1, 4, 7, 9], outChannels: 4, kernel: (3, 3), stride: 1, padding: 2, groups: 4),
        ConvCase(name: "depthwise 3x3 stride 3 pad 1", input: [1, 4, 7, 9], outChannels: 4, kernel: (3, 3), stride: 3, padding: 1, groups: 4),
        ConvCase(name: "depthwise 3x3 on 3x3 image pad 1 (all border)", input: [1, 2, 3, 3], outChannels: 2, kernel: (3, 3), stride: 1, padding: 1, groups: 2),
        ConvCase(name: "depthwise 3x3 on 2x2 image pad 1 stride 2", input: [1, 2, 2, 2], outChannels: 2, kernel: (3, 3), stride: 2, padding: 1, groups: 2),
        ConvCase(name: "depthwise 5x5 stride 2 pad 2 (generic depthwise)", input: [2, 3, 7, 9], outChannels: 3, kernel: (5, 5), stride: 2, padding: 2, groups: 3, hasBias: false),
        ConvCase(name: "depthwise 1x4 stride 1 pad 1", input: [1, 3, 5, 6], outChannels: 3, kernel: (1, 4), stride: 1, padding: 1, groups: 3),
        // Stride 1, not 3x3: the zero-padded plane, eight outputs per register (16 wide: two
        // vectors; 19 wide: two and three left over).
        ConvCase(name: "depthwise 5x5 stride 1 pad 2 on 16x16 (padded plane)", input: [1, 6, 16, 16], outChannels: 6, kernel: (5, 5), stride: 1, padding: 2, groups: 6),
        ConvCase(name: "depthwise 5x5 stride 1 pad 2 on 13x19 (padded plane)", input: [2, 3, 13, 19], outChannels: 3, kernel: (5, 5), stride: 1, padding: 2, groups: 3),
        ConvCase(name: "depthwise 7x7 stride 1 pad 3 on 9x24, no bias", input: [1, 2, 9, 24], outChannels: 2, kernel: (7, 7), stride: 1, padding: 3, groups: 2, hasBias: false),
        // Small weights on an image large enough for bands of output rows (96 bands of one row).
        ConvCase(name: "3x3 C=64 96x96 (im2col in bands)", input: [1, 64, 96, 96], outChannels: 2, kernel: (3, 3), stride: 1, padding: 1, groups: 1),
        // Patch-embedding-like: stride 2 (the vector gather, odd output width 45), two images of
        // two bands of 20 output rows, the second one 15 rows.
        ConvCase(name: "3x3 stride 2 C=8 70x90 (im2col in bands)", input: [2, 8, 70, 90], outChannels: 4, kernel: (3, 3), stride: 2, padding: 1, groups: 1),
        ConvCase(name: "3x3 stride 2 C=8 70x90 without bias (im2col in bands)", input: [2, 8, 70, 90], outChannels: 5, kernel: (3, 3), stride: 2, padding: 1, groups: 1, hasBias: false),
        // Bands per group: 2 groups x 2 bands of 91 rows (the second 39).
        ConvCase(name: "grouped 3x3 130x40 (im2col in bands)", input: [1, 4, 130, 40], outChannels: 6, kernel: (3, 3), stride: 1, padding: 1, groups: 2),
        // Weights of 2 x 18432 are too large to share the cache with a band: the image is unfolded
        // in row tiles of 4M floats (14 rows, then 2) and multiplied by one threaded sgemm each.
        // Sums of 18,433 terms: the BLAS's kernel (Haswell, SkylakeX...) decides their order.
        ConvCase(name: "3x3 C=2048 -> 2 on 16x16 (im2col whole)", input: [1, 2048, 16, 16], outChannels: 2, kernel: (3, 3), stride: 1, padding: 1, groups: 1),
    ]

    @Test("conv2d matches the direct definition", arguments: cases)
    func matchesReference(_ c: ConvCase) {
        var rng = SplitMix64(seed: UInt64(c.name.utf8.count) &* 7919 &+ UInt64(c.input.reduce(0, +)))
        let x = randomTensor(c.input, using: &rng)
        let weight = randomTensor([c.outChannels, c.input[1] / c.groups, c.kernel.0, c.kernel.1], using: &rng)
        let bias = c.hasBias ? randomTensor([c.outChannels], using: &rng) : nil
        let out = Kernels.conv2d(x, weight: weight, bias: bias, stride: c.stride, padding: c.padding, groups: c.groups)
        let expected = Self.reference(x, weight, bias, stride: c.stride, padding: c.padding, groups: c.groups)
        expectClose(out, expected.values, shape: expected.shape, "conv2d \(c.name)")
    }

    @Test("the tolerances still catch one missing term in the longest sum")
    func toleranceCatchesOneTerm() {
        // The 18,433-term case: fullSet the centre tap of input channel 0 from output channel 0's
        // reference, a term of 0.25 in magnitude on average, and the correct kernel must fail it.
        let c = Self.cases.last!
        var rng = SplitMix64(seed: UInt64(c.name.utf8.count) &* 7919 &+ UInt64(c.input.reduce(0, +)))
        let x = randomTensor(c.input, using: &rng)
        let weight = randomTensor([c.outChannels, c.input[1], 3, 3], using: &rng)
        let bias = randomTensor([c.outChannels], using: &rng)
        let out = Kernels.conv2d(x, weight: weight, bias: bias, stride: c.stride, padding: c.padding)
        var wrongWeight = weight
        wrongWeight.data[4] = 0
        let wrong = Self.reference(x, wrongWeight, bias, stride: c.stride, padding: c.padding, groups: 1)
        let check = ToleranceCheck(out.data, wrong.values)
        print("one missing term: \(check)")
        // Output channel 0's 256 pixels each lose x * w; all but the few where that product is
        // within a tolerance (~1e-3) of zero must fail.
        #expect(check.failures >= 240, "\(check)")
    }

    @Test("3x3 convolution of a ramp by hand")
    func handComputed() {
        // 1 channel 3x3 image 1...9, kernel picks (top-left) - (bottom-right) with padding 0:
        // one output, 1 - 9 = -8. With padding 1 the centre output is the same.
        let x = FloatTensor(shape: [1, 1, 3, 3], data: (1...9).map(Float.init))
        var kernel = [Float](repeating: 0, count: 9)
        kernel[0] = 1; kernel[8] = -1
        let weight = FloatTensor(shape: [1, 1, 3, 3], data: kernel)
        #expect(Kernels.conv2d(x, weight: weight, bias: nil).data == [-8])
        let padded = Kernels.conv2d(x, weight: weight, bias: nil, padding: 1)
        // Row-major 3x3 outputs: out[y][x] = in[y-1][x-1] - in[y+1][x+1] (zero outside).
        #expect(padded.data == [-5, -6, 0, -8, -8, 2, 0, 4, 5])
        // The depthwise path must agree (groups == channels == 1).
        #expect(Kernels.conv2d(x, weight: weight, bias: nil, padding: 1, groups: 1).data == padded.data)
    }
}

@Suite("ConvTranspose2d")
struct ConvTransposeTests {
    /// Scatter definition: out[n, o, y*s + i, x*s + j] += x[n, c, y, x] * weight[c, o, i, j].
    static func reference(_ x: FloatTensor, _ weight: FloatTensor, _ bias: FloatTensor?, stride: Int) -> (values: [Expected], shape: [Int]) {
        reference(x.exact, shape: x.shape, weight, bias, stride: stride)
    }

    static func reference(_ x: [Expected], shape: [Int], _ weight: FloatTensor, _ bias: FloatTensor?,
                          stride: Int) -> (values: [Expected], shape: [Int]) {
        let (batch, channels, height, width) = (shape[0], shape[1], shape[2], shape[3])
        let (outChannels, kh, kw) = (weight.shape[1], weight.shape[2], weight.shape[3])
        let outHeight = (height - 1) * stride + kh, outWidth = (width - 1) * stride + kw
        var out = [Expected](repeating: .zero, count: batch * outChannels * outHeight * outWidth)
        for n in 0..<batch {
            for o in 0..<outChannels {
                for p in 0..<(outHeight * outWidth) {
                    out[(n * outChannels + o) * outHeight * outWidth + p] = bias.map { Expected(exact: $0.data[o]) } ?? .zero
                }
                for c in 0..<channels {
                    for y in 0..<height {
                        for xi in 0..<width {
                            for i in 0..<kh {
                                for j in 0..<kw {
                                    let xv = x[((n * channels + c) * height + y) * width + xi]
                                    let wv = Expected(exact: weight.data[((c * outChannels + o) * kh + i) * kw + j])
                                    out[((n * outChannels + o) * outHeight + y * stride + i) * outWidth + xi * stride + j] += xv * wv
                                }
                            }
                        }
                    }
                }
            }
        }
        return (out, [batch, outChannels, outHeight, outWidth])
    }

    @Test("convTranspose2d matches the scatter definition",
          arguments: [
              (kernel: 2, stride: 2, bias: true),   // SAM's upscaling
              (kernel: 3, stride: 2, bias: true),   // overlapping taps
              (kernel: 1, stride: 2, bias: true),   // gaps between taps stay at the bias
              (kernel: 2, stride: 1, bias: false),
          ])
    func matchesReference(kernel: Int, stride: Int, bias hasBias: Bool) {
        var rng = SplitMix64(seed: UInt64(31 * kernel + stride))
        let x = randomTensor([2, 5, 7, 9], using: &rng)
        let weight = randomTensor([5, 3, kernel, kernel], using: &rng)
        let bias = hasBias ? randomTensor([3], using: &rng) : nil
        let out = Kernels.convTranspose2d(x, weight: weight, bias: bias, stride: stride)
        let expected = Self.reference(x, weight, bias, stride: stride)
        expectClose(out, expected.values, shape: expected.shape, "convTranspose2d k\(kernel) s\(stride)")
    }
}
