import SAMTensor

extension Kernels {
    /// √(2/π), the tanh approximation's scale.
    static let geluTanhScale: Float = 0.797_884_560_802_865_4
    /// The cubic term's coefficient.
    static let geluTanhCubic: Float = 0.044_715

    /// GELU's tanh approximation, PyTorch's nn.GELU(approximate="tanh"),
    /// 0.5 * x * (1 + tanh(√(2/π) * (x + 0.044715 * x³))), in place, eight lanes at a time (sixteen
    /// with AVX-512 in a SAM_FMA build, the same bits).
    /// ref: torch/nn/modules/activation.py GELU (approximate="tanh"); EfficientViT's `gelu` activation
    package static func geluTanh(_ x: inout FloatTensor) {
        let count = x.count
        guard count > 0 else { return }
        x.data.withUnsafeMutableBufferPointer { buffer in
            let p = buffer.baseAddress!
            parallelRanges(count) { range in geluTanhInPlace(p + range.lowerBound, count: range.count) }
        }
    }

    /// Tanh-approximated GELU over `count` contiguous floats, in place; a building block for fused kernels.
    @inline(__always)
    static func geluTanhInPlace(_ p: UnsafeMutablePointer<Float>, count: Int) {
        mapInPlace(p, count: count, wideVectors: { geluTanhWideVectors($0, count: $1) }) { geluTanh8($0) }
    }

    /// 0.5 (1 + tanh(u)) is the logistic sigmoid of 2u, so the approximation is x * σ(2u): one
    /// exponential of a non-positive argument (`exp8`'s domain) on each side of zero, no tanh
    /// and no 1 + tanh cancellation for negative x.
    @inline(__always)
    static func geluTanh8(_ x: SIMD8<Float>) -> SIMD8<Float> {
        let inner = multiplyAdd(x * x * x, SIMD8(repeating: geluTanhCubic), x)
        let z = 2 * geluTanhScale * inner
        let magnitude = z.replacing(with: -z, where: z .< 0)
        // exp8 clamps its argument at -87; e^-87 ~ 1.6e-38 and beyond, σ(z) for z < -87 rounds to 0.
        let e = exp8(-magnitude).replacing(with: 0, where: magnitude .> 87)
        // σ(z) = 1 / (1 + e^-z) for z >= 0, e^z / (1 + e^z) below: both from e = e^-|z| <= 1.
        let numerator = SIMD8<Float>(repeating: 1).replacing(with: e, where: z .< 0)
        return x * (numerator / (1 + e))
    }
}
