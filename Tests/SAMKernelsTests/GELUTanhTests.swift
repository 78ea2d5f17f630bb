import Foundation
import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

/// GELU's tanh approximation (EfficientViT's encoder) against the float64 formula.
@Suite("Tanh GELU")
struct GELUTanhTests {
    /// 0.5 x (1 + tanh(u)), u = √(2/π) (x + 0.044715 x³), in float64 as x σ(2u) (the same function;
    /// 1 + tanh(u) cancels for negative x, even in float64), with σ and z = 2u.
    static func exact(_ x: Double) -> (value: Double, sigmoid: Double, z: Double) {
        let z = 2 * (2 / Double.pi).squareRoot() * (x + 0.044715 * x * x * x)
        let sigmoid = 1 / (1 + exp(-z))
        return (x * sigmoid, sigmoid, z)
    }

    /// The kernel computes x σ(z), z = 2u, with e^-|z| within 2 ulp (`exp8`): the error is that of
    /// e (4u relative) and of z (a few roundings of the cubic, < 8u |z|) through dσ/dz = σ(1 - σ),
    /// plus the roundings of 1 + e, the division and the product (4u x σ, and an ulp of the result);
    /// below z = -87 σ < e^-87 is flushed to 0.
    static func bound(_ x: Double) -> Double {
        let (value, s, z) = exact(x), u = Expected.unitRoundoff
        return abs(x) * s * (1 - s) * (4 * u + 8 * u * abs(z)) + 4 * u * abs(x) * s + Double(Float(value).ulp)
            + (z < -87 ? abs(x) * exp(-87.0) : 0)
    }

    @Test("within its error bound on a dense grid over [-12, 12], and the tails go to 0 and x")
    func denseGrid() {
        let count = 480_001
        var x = FloatTensor(shape: [count], data: (0..<count).map { Float(-12 + 24 * Double($0) / Double(count - 1)) })
        let input = x.data
        Kernels.geluTanh(&x)
        var worstRatio = 0.0, worstAt: Float = 0, worstError = 0.0
        for (v, got) in zip(input, x.data) {
            let error = abs(Double(got) - Self.exact(Double(v)).value)
            let ratio = error / Self.bound(Double(v))
            if ratio > worstRatio { (worstRatio, worstAt, worstError) = (ratio, v, error) }
        }
        print("[gelu tanh dense grid] worst error \(worstError) at x = \(worstAt), \(worstRatio) of its bound")
        #expect(worstRatio <= 1, "tanh GELU error \(worstError) at x = \(worstAt) is \(worstRatio)x its bound")
        var tails = FloatTensor(shape: [4], data: [-100, -30, 30, 100])
        Kernels.geluTanh(&tails)
        #expect(tails.data == [-0.0, -0.0, 30, 100])
    }

    @Test("the tanh form differs from the erf form by up to ~1e-3 (why the encoder needs its own kernel)")
    func differsFromErf() {
        var rng = SplitMix64(seed: 11)
        let x = randomTensor([4, 2_001], in: -4...4, using: &rng)
        var tanhForm = x, erfForm = x
        Kernels.geluTanh(&tanhForm)
        Kernels.gelu(&erfForm)
        let gap = zip(tanhForm.data, erfForm.data).map { abs($0 - $1) }.max() ?? 0
        // The two forms differ by at most 4.7e-4 (at |x| ~ 2.1): far above either kernel's error.
        #expect(gap > 1e-4 && gap < 1e-3, "largest tanh / erf gap \(gap)")
    }

    @Test("as a convolution's epilogue it gives the same bits as the separate pass")
    func epilogue() {
        var rng = SplitMix64(seed: 12)
        let x = randomTensor([1, 3, 9, 7], in: -3...3, using: &rng)
        let weight = randomTensor([5, 3, 3, 3], using: &rng), bias = randomTensor([5], using: &rng)
        let fused = Kernels.conv2d(x, weight: weight, bias: bias, padding: 1, epilogue: .geluTanh)
        var separate = Kernels.conv2d(x, weight: weight, bias: bias, padding: 1)
        Kernels.geluTanh(&separate)
        #expect(fused.data == separate.data)
    }
}
