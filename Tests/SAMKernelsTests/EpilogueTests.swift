import Foundation
import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

/// The fused epilogues (residual add, then activation) against the unfused definition, on
/// shapes that take each kernel's tiled path and its fallback.
@Suite("Fused epilogues")
struct EpilogueTests {
    enum Activation: String, CaseIterable, Sendable { case none, gelu, relu }

    static func finish(_ values: [Expected], residual: FloatTensor?, _ activation: Activation) -> [Expected] {
        values.indices.map { i in
            let v = residual.map { values[i] + Expected(exact: $0.data[i]) } ?? values[i]
            switch activation {
            case .none: return v
            case .gelu: return v.gelu()
            case .relu: return v.relu()
            }
        }
    }

    static func epilogue(_ activation: Activation, residual: FloatTensor?) -> Kernels.Epilogue {
        switch activation {
        case .none: Kernels.Epilogue(residual: residual, activation: .none)
        case .gelu: Kernels.Epilogue(residual: residual, activation: .gelu)
        case .relu: Kernels.Epilogue(residual: residual, activation: .relu)
        }
    }

    /// (input shape, out channels, kernel, stride, padding, groups): pointwise large (tiled, with
    /// a partial last tile) and small (fallback), depthwise, dense 3x3 in bands of rows (two
    /// images of two bands, the second partial), and dense 3x3 unfolded whole: a small image
    /// (too few bands) and weights too large to share the cache with a band.
    static let convCases: [([Int], Int, Int, Int, Int, Int)] = [
        ([1, 8, 100, 100], 32, 1, 1, 0, 1),
        ([2, 5, 7, 9], 6, 1, 1, 0, 1),
        ([1, 6, 33, 35], 6, 3, 1, 1, 6),
        ([2, 3, 130, 100], 8, 3, 2, 1, 1),
        ([1, 4, 20, 22], 5, 3, 2, 1, 1),
        ([1, 64, 12, 12], 64, 3, 1, 1, 1),
    ]

    @Test("conv2d + epilogue", arguments: Activation.allCases, [false, true])
    func conv(activation: Activation, withResidual: Bool) {
        for (index, c) in Self.convCases.enumerated() {
            let (input, outChannels, kernel, stride, padding, groups) = c
            var rng = SplitMix64(seed: UInt64(100 + index))
            let x = randomTensor(input, using: &rng)
            let weight = randomTensor([outChannels, input[1] / groups, kernel, kernel], using: &rng)
            let bias = randomTensor([outChannels], using: &rng)
            let plain = ConvTests.reference(x, weight, bias, stride: stride, padding: padding, groups: groups)
            let residual = withResidual ? randomTensor(plain.shape, in: -2...2, using: &rng) : nil
            let out = Kernels.conv2d(x, weight: weight, bias: bias, stride: stride, padding: padding, groups: groups,
                                     epilogue: Self.epilogue(activation, residual: residual))
            expectClose(out, Self.finish(plain.values, residual: residual, activation), shape: plain.shape,
                        "conv \(input) -> \(outChannels) k\(kernel) g\(groups) \(activation) residual \(withResidual)")
        }
    }

    @Test("linear + epilogue", arguments: Activation.allCases, [false, true])
    func linear(activation: Activation, withResidual: Bool) {
        // 1000 rows of 512 outputs take the row-tiled path (tiles of 128, the last one partial),
        // 2700 rows of 101 too (tiles of 648, bias rows past the last eight-float store);
        // 7 rows the single-gemm fallback.
        for (index, (rows, inFeatures, outFeatures)) in [(1000, 24, 512), (2_700, 12, 101), (7, 13, 9)].enumerated() {
            var rng = SplitMix64(seed: UInt64(200 + index))
            let x = randomTensor([rows, inFeatures], using: &rng)
            let weight = randomTensor([outFeatures, inFeatures], using: &rng)
            let bias = randomTensor([outFeatures], using: &rng)
            let residual = withResidual ? randomTensor([rows, outFeatures], in: -2...2, using: &rng) : nil
            let out = Kernels.linear(x, weight: weight, bias: bias, epilogue: Self.epilogue(activation, residual: residual))
            let plain = LinearTests.reference(x, weight, bias)
            expectClose(out, Self.finish(plain, residual: residual, activation), shape: [rows, outFeatures],
                        "linear \(rows)x\(inFeatures)->\(outFeatures) \(activation) residual \(withResidual)")
        }
    }
}

@Suite("Depthwise convolution on tokens")
struct DepthwiseTokensTests {
    @Test("equals the NCHW depthwise convolution between transposes", arguments: [(3, 16), (3, 13), (5, 24)])
    func matchesNCHW(kernel: Int, channels: Int) {
        var rng = SplitMix64(seed: UInt64(kernel * 100 + channels))
        let (height, width) = (11, 9)
        let tokens = randomTensor([2, height * width, channels], using: &rng)
        let weight = randomTensor([channels, 1, kernel, kernel], using: &rng)
        let bias = randomTensor([channels], using: &rng)
        let residual = randomTensor(tokens.shape, using: &rng)
        let out = Kernels.depthwiseConvTokens(tokens, height: height, width: width, weight: weight, bias: bias,
                                              padding: kernel / 2, epilogue: Kernels.Epilogue(residual: residual, activation: .gelu))
        let nchw = Kernels.tokensToNCHW(tokens, height: height, width: width)
        let plain = ConvTests.reference(nchw, weight, bias, stride: 1, padding: kernel / 2, groups: channels)
        // The reference is NCHW; bring it to tokens order, then add the residual and apply GELU.
        var expected = [Expected](repeating: .zero, count: tokens.count)
        for n in 0..<2 {
            for c in 0..<channels {
                for p in 0..<(height * width) {
                    expected[(n * height * width + p) * channels + c] = plain.values[(n * channels + c) * height * width + p]
                }
            }
        }
        expected = EpilogueTests.finish(expected, residual: residual, .gelu)
        expectClose(out, expected, shape: tokens.shape, "depthwise tokens k\(kernel) C\(channels)")
    }
}

@Suite("Transposed convolution epilogue")
struct ConvTransposeEpilogueTests {
    @Test("fused epilogue equals the unfused kernel followed by the epilogue, bit for bit", arguments: [(2, 2), (3, 2)])
    func fusedEqualsUnfused(kernel: Int, stride: Int) {
        var rng = SplitMix64(seed: UInt64(40 + kernel))
        let x = randomTensor([2, 5, 6, 7], using: &rng)
        let weight = randomTensor([5, 4, kernel, kernel], using: &rng)
        let bias = randomTensor([4], using: &rng)
        var unfused = Kernels.convTranspose2d(x, weight: weight, bias: bias, stride: stride)
        let residual = randomTensor(unfused.shape, using: &rng)
        let epilogue = Kernels.Epilogue(residual: residual, activation: .gelu)
        let fused = Kernels.convTranspose2d(x, weight: weight, bias: bias, stride: stride, epilogue: epilogue)
        Kernels.applyEpilogue(epilogue, to: &unfused)
        #expect(fused.shape == unfused.shape)
        #expect(fused.data == unfused.data)
    }
}
