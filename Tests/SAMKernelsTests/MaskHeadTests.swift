import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

@Suite("Fused mask head")
struct MaskHeadTests {
    /// (input channels, middle, output, height, width, masks): channel counts off the 8-lane
    /// vectors, and whole vectors with a MobileSAM-like 4:1:1/2 channel ratio.
    static let shapes = [(12, 12, 6, 3, 5, 3), (32, 16, 8, 4, 4, 4)]

    /// Float64 references for what the model runs module by module when observed: ConvTranspose2d,
    /// LayerNorm2d, GELU, ConvTranspose2d, GELU, then the hypernetwork product.
    /// The products the head runs here: the BLAS everywhere, the panel product with AVX-512.
    static let kernels: [Kernels.Float32LinearKernel] = Kernels.panelKernelAvailable ? [.panels, .blas] : [.blas]

    @Test("equals the module-by-module upscaling and hypernetwork product", arguments: kernels, shapes)
    func matchesModules(kernel: Kernels.Float32LinearKernel, shape: (Int, Int, Int, Int, Int, Int)) throws {
        let (c0, c1, c2, height, width, maskCount) = shape
        var rng = SplitMix64(seed: UInt64(c0 * 100 + height))
        let tokens = randomTensor([1, height * width, c0], using: &rng)
        let w0 = randomTensor([c0, c1, 2, 2], in: -0.3...0.3, using: &rng), b0 = randomTensor([c1], using: &rng)
        let gamma = randomTensor([c1], in: 0.5...1.5, using: &rng), beta = randomTensor([c1], using: &rng)
        let w1 = randomTensor([c1, c2, 2, 2], in: -0.3...0.3, using: &rng), b1 = randomTensor([c2], using: &rng)
        let hyper = randomTensor([maskCount, c2], using: &rng)

        let nchw = Kernels.tokensToNCHW(tokens, height: height, width: width)  // a transpose: exact
        let first = ConvTransposeTests.reference(nchw, w0, b0, stride: 2)
        let normed = NormalizationTests.layerNorm2dReference(first.values, shape: first.shape, weight: gamma, bias: beta, eps: 1e-6)
        let second = ConvTransposeTests.reference(normed.map { $0.gelu() }, shape: first.shape, w1, b1, stride: 2)
        let upscaled = second.values.map { $0.gelu() }
        let pixels = 16 * height * width
        var expected = [Expected](repeating: .zero, count: maskCount * pixels)
        for m in 0..<maskCount {
            for p in 0..<pixels {
                var sum = Expected.zero
                for d in 0..<c2 { sum += Expected(exact: hyper.data[m * c2 + d]) * upscaled[d * pixels + p] }
                expected[m * pixels + p] = sum
            }
        }

        let weights = Kernels.MaskHeadWeights(firstWeight: w0, firstBias: b0, normWeight: gamma, normBias: beta, normEps: 1e-6,
                                              secondWeight: w1, secondBias: b1)
        let masks = try Kernels.withFloat32LinearKernel(kernel) {
            Kernels.maskHead(tokens: tokens, height: height, width: width, weights: weights, hypernetwork: hyper)
        }
        expectClose(masks, expected, shape: [1, maskCount, 4 * height, 4 * width],
                    "\(kernel) mask head \(c0)/\(c1)/\(c2) \(height)x\(width)")
    }
}
