import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

/// Pointwise convolutions on int8 codes (`samconvert --dtype int8`, int8 products on): each pixel's
/// channels are one quantized row, so the result is `linear`'s int8 products on the pixels as tokens
/// (which `Int8LinearTests` holds to the documented rule), bit for bit, channel-major, on every
/// implementation this CPU has (AMX, AVX512_VNNI, AVX2, portable C).
@Suite("int8 pointwise convolutions", .serialized)
struct Int8ChannelProductTests {
    static func codes(_ weight: FloatTensor) throws -> QuantizedWeight {
        let matrix = [weight.shape[0], weight.count / weight.shape[0]]
        return try weight.data.withUnsafeBufferPointer { try QuantizedWeight(quantizing: $0, shape: matrix, scheme: .int8) }
    }

    /// (batch, in channels, out channels, height, width): tiles of whole rows, a partial last tile, one pixel.
    @Test("a pointwise convolution is linear's int8 products on the pixels as tokens",
          arguments: [(1, 64, 256, 16, 16), (2, 13, 7, 5, 9), (1, 160, 320, 3, 40), (1, 3, 5, 1, 1)])
    func equalsLinearOnTokens(_ c: (Int, Int, Int, Int, Int)) throws {
        let (batch, inChannels, outChannels, height, width) = c
        var rng = SplitMix64(seed: UInt64(inChannels * 131 + width))
        let x = randomTensor([batch, inChannels, height, width], in: -3...3, using: &rng)
        let weight = try Self.codes(randomTensor([outChannels, inChannels], using: &rng))
        let bias = randomTensor([outChannels], using: &rng)
        let residual = randomTensor([batch, outChannels, height, width], using: &rng)
        let epilogue = Kernels.Epilogue(residual: residual, activation: .gelu)

        try Int8LinearTests.eachImplementation { level in
            let conv = try #require(Kernels.withInt8Products(true) { Kernels.int8PointwiseConv(x, weight: weight, bias: bias, epilogue: epilogue) })
            var expected: [Float] = []
            for image in 0..<batch {
                let plane = inChannels * height * width
                let one = FloatTensor(shape: [1, inChannels, height, width], data: Array(x.data[(image * plane)..<((image + 1) * plane)]))
                let tokens = Kernels.withInt8Products(true) {
                    Kernels.linear(Kernels.nchwToTokens(one), weight: WeightTensor(weight), bias: bias)
                }
                expected += Kernels.tokensToNCHW(tokens, height: height, width: width).data
            }
            var finished = FloatTensor(shape: conv.shape, data: expected)
            Kernels.applyEpilogue(epilogue, to: &finished)
            #expect(conv.shape == [batch, outChannels, height, width])
            #expect(conv.data == finished.data, "\(c), implementation \(level)")
        }
        #expect(Kernels.withInt8Products(false) { Kernels.int8PointwiseConv(x, weight: weight, bias: bias) } == nil)
    }

    /// The block's shapes (MBConv: stride 1 and a residual; PatchMerging: stride 2), in int8 products on
    /// both 1x1 convolutions' codes, against the same three layers run one after another. Each depthwise
    /// filter has one tap of 1 (channel c the tap c % 9, so every window position and the padding are
    /// read): its sum is exact in any order, so the two runs must agree bit for bit, where float32
    /// depthwise sums in another order would move a rounding and with it an int8 code.
    @Test("an inverted residual on int8 codes is its three layers, bit for bit",
          arguments: [(1, 8, 32, 8, 9, 20, 1, true), (2, 6, 12, 10, 7, 9, 2, false), (1, 64, 256, 64, 4, 64, 1, true)])
    func invertedResidualEqualsLayers(_ c: (Int, Int, Int, Int, Int, Int, Int, Bool)) throws {
        let (batch, inChannels, expanded, outChannels, height, width, stride, hasResidual) = c
        var rng = SplitMix64(seed: UInt64(expanded * 17 + width))
        let x = randomTensor([batch, inChannels, height, width], in: -2...2, using: &rng)
        let expandWeight = randomTensor([expanded, inChannels, 1, 1], using: &rng), expandBias = randomTensor([expanded], using: &rng)
        let depthwiseWeight = FloatTensor(shape: [expanded, 1, 3, 3], data: (0..<(expanded * 9)).map { $0 % 9 == $0 / 9 % 9 ? 1 : 0 })
        let depthwiseBias = randomTensor([expanded], using: &rng)
        let projectWeight = randomTensor([outChannels, expanded, 1, 1], using: &rng), projectBias = randomTensor([outChannels], using: &rng)
        let expandCodes = try Self.codes(expandWeight), projectCodes = try Self.codes(projectWeight)
        // The float32 weights are the codes' values, as a model loads them.
        let w = Kernels.InvertedResidualWeights(
            expandWeight: FloatTensor(shape: expandWeight.shape, data: expandCodes.floats()), expandBias: expandBias,
            depthwiseWeight: depthwiseWeight, depthwiseBias: depthwiseBias,
            projectWeight: FloatTensor(shape: projectWeight.shape, data: projectCodes.floats()), projectBias: projectBias,
            expandInt8: expandCodes, projectInt8: projectCodes)
        let residual: FloatTensor? = hasResidual ? x : nil
        let epilogue = Kernels.Epilogue(residual: residual, activation: hasResidual ? .gelu : .none)

        var fused = FloatTensor(zeros: [])
        try Int8LinearTests.eachImplementation { level in
            let (block, layers) = try Kernels.withInt8Products(true) {
                let fused = Kernels.invertedResidual(x, weights: w, stride: stride, activation: .gelu, epilogue: epilogue)
                let hidden = try #require(Kernels.int8PointwiseConv(x, weight: expandCodes, bias: expandBias, epilogue: .gelu))
                let depthwise = Kernels.conv2d(hidden, weight: depthwiseWeight, bias: depthwiseBias, stride: stride, padding: 1,
                                               groups: expanded, epilogue: .gelu)
                let layers = try #require(Kernels.int8PointwiseConv(depthwise, weight: projectCodes, bias: projectBias, epilogue: epilogue))
                return (fused, layers)
            }
            #expect(block.shape == layers.shape)
            #expect(block.data == layers.data, "\(c), implementation \(level)")
            fused = block
        }
        // Off, the codes are ignored: the float32 block on their values, which int8 products differ from.
        let float32 = Kernels.withInt8Products(false) {
            Kernels.invertedResidual(x, weights: w, stride: stride, activation: .gelu, epilogue: epilogue)
        }
        let plain = Kernels.InvertedResidualWeights(expandWeight: w.expandWeight, expandBias: expandBias, depthwiseWeight: depthwiseWeight,
                                                    depthwiseBias: depthwiseBias, projectWeight: w.projectWeight, projectBias: projectBias)
        #expect(float32.data == Kernels.invertedResidual(x, weights: plain, stride: stride, activation: .gelu, epilogue: epilogue).data)
        #expect(float32.data != fused.data)
    }
}
