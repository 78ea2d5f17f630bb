// Eight-lane float math for the hot elementwise loops, where libm's scalar calls (expf, erff)
// would dominate. Each function documents its measured error.

extension Kernels {
    /// e^x on eight lanes, for x <= 0 as softmax feeds it (x - the row's max), clamped below at -87.
    /// exp(x) = 2^n * exp(r) with n = round(x / ln 2), r = x - n ln 2 in [-ln2/2, ln2/2] (ln 2 in
    /// two parts so r stays exact), exp(r) by its Taylor series to r^7 (truncation < 6e-9
    /// relative), 2^n built in the exponent bits. Within 2 ulp of expf (SAMKernelsTests).
    @inline(__always)
    static func exp8(_ x: SIMD8<Float>) -> SIMD8<Float> {
        // Below -87, 2^n would leave the normal range; e^-87 ~ 1.6e-38 is zero for a softmax.
        let x = pointwiseMax8(x, SIMD8(repeating: -87))
        // Adding 1.5 * 2^23 rounds x/ln2 to an integer held in the low mantissa bits (fused, so
        // n may differ from round(x/ln2) by one at a tie: r then stays within ln2/2 + 1 ulp).
        let roundingMagic: Float = 12_582_912
        let shifted = multiplyAdd(x, SIMD8(repeating: 1.442_695_04), SIMD8(repeating: roundingMagic))
        let n = shifted - roundingMagic
        // n * (ln 2's high part) is exact (its few mantissa bits times |n| <= 126), so fusing the
        // subtractions only saves instructions.
        let r = multiplyAdd(n, SIMD8(repeating: -1.428_606_765_330_187e-6),
                            multiplyAdd(n, SIMD8(repeating: -0.693_145_751_953_125), x))
        var p = SIMD8<Float>(repeating: 1.0 / 5040)
        p = multiplyAdd(p, r, 1.0 / 720)
        p = multiplyAdd(p, r, 1.0 / 120)
        p = multiplyAdd(p, r, 1.0 / 24)
        p = multiplyAdd(p, r, 1.0 / 6)
        p = multiplyAdd(p, r, 0.5)
        p = multiplyAdd(p, r, 1)
        p = multiplyAdd(p, r, 1)
        let integer = unsafeBitCast(shifted, to: SIMD8<Int32>.self) &- Int32(bitPattern: roundingMagic.bitPattern)
        let twoToN = unsafeBitCast((integer &+ 127) &<< 23, to: SIMD8<Float>.self)
        return p * twoToN
    }
}

extension Kernels {
    /// `rows` rows of `width` floats, `stride` apart (0: one row repeated), into consecutive rows at
    /// `out`, with eight-float loads and stores: a memmove call per short row starts slowly (a
    /// linear's bias seeding rows of 96 to 1536 floats: its memmove calls were 2.5% of SAM 2.1 tiny's
    /// encoder samples, this loop 1.8%; packing a head's 64-byte value rows: 8.6% of the decoder's
    /// token-to-image attention at 100 points, perf on Zen 4).
    @inline(__always)
    static func copyRows(_ source: UnsafePointer<Float>, stride: Int, rows: Int, width: Int,
                         into out: UnsafeMutablePointer<Float>) {
        let vectorEnd = width & ~7
        for r in 0..<rows {
            let from = source + r * stride, to = out + r * width
            var c = 0
            while c < vectorEnd { to.store8(from.load8(at: c), at: c); c += 8 }
            while c < width { (to + c).initialize(to: from[c]); c += 1 }
        }
    }

    /// target[i] += addend[i] for i < count, eight lanes at a time.
    @inline(__always)
    static func addInPlace(_ target: UnsafeMutablePointer<Float>, _ addend: UnsafePointer<Float>, count: Int) {
        var i = 0
        while i + 8 <= count { target.store8(target.load8(at: i) + addend.load8(at: i), at: i); i += 8 }
        while i < count { target[i] += addend[i]; i += 1 }
    }

    /// row[i] += bias for i < count: a bias added after a product's sums.
    static func addBias(_ bias: Float, _ row: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count { row[i] += bias }
    }

    /// a * b + c on eight lanes: one fused multiply-add where the build targets FMA (`make` adds
    /// -DSAM_FMA with -target-cpu haswell, see CPU_FLAGS), else a multiply and an add. (Swift
    /// never fuses on its own, and on a build without FMA `addingProduct` would become a libm
    /// call per lane, hence the compile-time switch.)
    @inline(__always)
    static func multiplyAdd(_ a: SIMD8<Float>, _ b: SIMD8<Float>, _ c: SIMD8<Float>) -> SIMD8<Float> {
        #if SAM_FMA
        return c.addingProduct(a, b)
        #else
        return a * b + c
        #endif
    }

    @inline(__always)
    static func multiplyAdd(_ a: SIMD8<Float>, _ b: SIMD8<Float>, _ c: Float) -> SIMD8<Float> {
        multiplyAdd(a, b, SIMD8(repeating: c))
    }

    @inline(__always)
    static func multiplyAdd(_ a: Float, _ b: SIMD8<Float>, _ c: SIMD8<Float>) -> SIMD8<Float> {
        multiplyAdd(SIMD8(repeating: a), b, c)
    }
}

/// Unaligned eight-float loads and stores.
extension UnsafeMutablePointer<Float> {
    @inline(__always)
    func load8(at index: Int) -> SIMD8<Float> {
        UnsafeRawPointer(self + index).loadUnaligned(as: SIMD8<Float>.self)
    }

    @inline(__always)
    func store8(_ value: SIMD8<Float>, at index: Int) {
        UnsafeMutableRawPointer(self + index).storeBytes(of: value, as: SIMD8<Float>.self)
    }
}

extension UnsafePointer<Float> {
    @inline(__always)
    func load8(at index: Int) -> SIMD8<Float> {
        UnsafeRawPointer(self + index).loadUnaligned(as: SIMD8<Float>.self)
    }
}

extension Kernels {
    /// (sin x, cos x) on eight lanes, for moderate |x| (positional encodings: |x| < ~1e3).
    /// x = n π/2 + r with π/2 in three parts (Cody-Waite; r is exact to ~1e-9 for |x| < 1e3),
    /// sin r and cos r by their Taylor series on |r| <= π/4 (to r^9 and r^10: truncation
    /// < 2e-9), then the quadrant n mod 4 picks and signs them. Within 1.2e-7 absolute of
    /// sin/cos on |x| <= 100 (SAMKernelsTests), where libm's sinf/cosf are scalar calls.
    @inline(__always)
    package static func sinCos8(_ x: SIMD8<Float>) -> (sin: SIMD8<Float>, cos: SIMD8<Float>) {
        let roundingMagic: Float = 12_582_912
        let shifted = x * 0.636_619_772 + roundingMagic    // x * 2/π, rounded to an integer
        let n = shifted - roundingMagic
        var r = x - n * 1.570_312_5
        r = r - n * 4.837_512_969_970_703_125e-4
        r = r - n * 7.549_789_954_891_882_16e-8
        let r2 = r * r
        var s = SIMD8<Float>(repeating: 1.0 / 362_880)
        s = s * r2 - 1.0 / 5040
        s = s * r2 + 1.0 / 120
        s = s * r2 - 1.0 / 6
        s = r + r * r2 * s
        var c = SIMD8<Float>(repeating: -1.0 / 3_628_800)
        c = c * r2 + 1.0 / 40320
        c = c * r2 - 1.0 / 720
        c = c * r2 + 1.0 / 24
        c = c * r2 - 0.5
        c = c * r2 + 1
        let quadrant = unsafeBitCast(shifted, to: SIMD8<Int32>.self) &- Int32(bitPattern: roundingMagic.bitPattern)
        // Quadrants 1 and 3 swap sin and cos; sin is negated in 2 and 3, cos in 1 and 2.
        let swap = (quadrant & 1) .!= 0
        let sine = s.replacing(with: c, where: swap)
        let cosine = c.replacing(with: s, where: swap)
        let sineSign = unsafeBitCast((quadrant & 2) &<< 30, to: SIMD8<UInt32>.self)
        let cosineSign = unsafeBitCast(((quadrant &+ 1) & 2) &<< 30, to: SIMD8<UInt32>.self)
        return (unsafeBitCast(unsafeBitCast(sine, to: SIMD8<UInt32>.self) ^ sineSign, to: SIMD8<Float>.self),
                unsafeBitCast(unsafeBitCast(cosine, to: SIMD8<UInt32>.self) ^ cosineSign, to: SIMD8<Float>.self))
    }
}
