import SAMTensor

extension Kernels {
    /// GELU as PyTorch's nn.GELU() default, 0.5 * x * (1 + erf(x / sqrt(2))) (the erf form, not
    /// the tanh approximation), in place, eight lanes at a time with `erf8`.
    package static func gelu(_ x: inout FloatTensor) {
        let count = x.count
        guard count > 0 else { return }
        x.data.withUnsafeMutableBufferPointer { buffer in
            let p = buffer.baseAddress!
            parallelRanges(count) { range in geluInPlace(p + range.lowerBound, count: range.count) }
        }
    }

    /// GELU over `count` contiguous floats, in place; a building block for fused kernels.
    @inline(__always)
    static func geluInPlace(_ p: UnsafeMutablePointer<Float>, count: Int) {
        mapInPlace(p, count: count, wideVectors: { geluWideVectors($0, count: $1) }) { gelu8($0) }
    }

    /// `function` over `count` contiguous floats, in place, eight lanes at a time; two vectors or
    /// more go to `wideVectors` (its sixteen-lane copy, the same bits) where the CPU can. The last
    /// few lanes go through the same vector formula, so every element of a tensor gets the same
    /// rounding whatever its position.
    @inline(__always)
    static func mapInPlace(_ p: UnsafeMutablePointer<Float>, count: Int,
                           wideVectors: (UnsafeMutablePointer<Float>, Int) -> Void,
                           _ function: (SIMD8<Float>) -> SIMD8<Float>) {
        let raw = UnsafeMutableRawPointer(p)
        var i = 0
        if count >= 16 && wideVectorsAvailable {
            i = count & ~7
            wideVectors(p, i)
        }
        while i + 8 <= count {
            let v = raw.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
            raw.storeBytes(of: function(v), toByteOffset: i * 4, as: SIMD8<Float>.self)
            i += 8
        }
        guard i < count else { return }
        var tail = SIMD8<Float>(repeating: 0)
        for lane in 0..<(count - i) { tail[lane] = p[i + lane] }
        tail = function(tail)
        for lane in 0..<(count - i) { p[i + lane] = tail[lane] }
    }

    @inline(__always)
    static func gelu8(_ v: SIMD8<Float>) -> SIMD8<Float> {
        let inverseSqrt2: Float = 0.707_106_781_186_547_5
        return 0.5 * v * (1 + erf8(v * inverseSqrt2))
    }

    /// erf on eight lanes: x * P(x²) / Q(x²) on x clamped to ±3.925 (beyond it erf rounds to ±1
    /// in Float). The coefficients are a least-squares rational fit to erf made for this project
    /// (scripts/fit_erf.py); evaluated in Float the result is within 4.6e-7 of erf everywhere
    /// (libm's erff: ~1e-7), far below the model's 1e-4 verification tolerance, and it
    /// vectorises where erff is a scalar libm call.
    @inline(__always)
    static func erf8(_ x: SIMD8<Float>) -> SIMD8<Float> {
        // (`replacing` compiles to compare-and-blend; `clamped` ends up as two calls.)
        let limit: Float = 3.925
        var clampedX = x.replacing(with: limit, where: x .> limit)
        clampedX = clampedX.replacing(with: -limit, where: clampedX .< -limit)
        let t = clampedX * clampedX
        var p = SIMD8<Float>(repeating: -1.336_374_3e-8)
        p = multiplyAdd(p, t, 4.723_054_2e-6)
        p = multiplyAdd(p, t, 3.805_648_3e-4)
        p = multiplyAdd(p, t, 3.832_968_2e-3)
        p = multiplyAdd(p, t, 5.428_285_2e-2)
        p = multiplyAdd(p, t, 1.847_018_0e-1)
        p = multiplyAdd(p, t, 1.128_379_2)
        var q = SIMD8<Float>(repeating: 6.346_836_0e-5)
        q = multiplyAdd(q, t, 1.305_406_7e-3)
        q = multiplyAdd(q, t, 1.543_281_6e-2)
        q = multiplyAdd(q, t, 1.137_797_6e-1)
        q = multiplyAdd(q, t, 4.970_212_6e-1)
        q = multiplyAdd(q, t, 1)
        return clampedX * p / q
    }
}
