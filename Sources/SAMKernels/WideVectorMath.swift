import CVectorMath

extension Kernels {
    /// Whether the sixteen-lane loops of CVectorMath run here: a build with fused multiply-adds
    /// (SAM_FMA, whose eight-lane loops they match bit for bit) on a CPU with AVX-512. Builds
    /// without SAM_FMA keep their unfused eight-lane loops, so each build gives the same bits on
    /// every CPU it runs on.
    static let wideVectorsAvailable: Bool = {
        #if SAM_FMA
        return sam_vector_math_has_avx512() != 0
        #else
        return false
        #endif
    }()

    /// `exponentiateVectors` on sixteen lanes (count a multiple of 8), when `wideVectorsAvailable`:
    /// the same exponentials and the same lane sums, in half the instructions.
    @inline(__always)
    static func exponentiateWideVectors(_ row: UnsafeMutablePointer<Float>, count: Int, minus shift: Float) -> SIMD8<Float> {
        var sums = SIMD8<Float>(repeating: 0)
        withUnsafeMutableBytes(of: &sums) { bytes in
            sam_exponentiate_avx512(row, Int64(count), shift, bytes.baseAddress!.assumingMemoryBound(to: Float.self))
        }
        return sums
    }

    /// `geluTanhInPlace`'s vector loop on sixteen lanes (count a multiple of 8), when `wideVectorsAvailable`.
    @inline(__always)
    static func geluTanhWideVectors(_ values: UnsafeMutablePointer<Float>, count: Int) {
        sam_gelu_tanh_avx512(values, Int64(count))
    }

    /// `geluInPlace`'s vector loop on sixteen lanes (count a multiple of 8), when `wideVectorsAvailable`.
    @inline(__always)
    static func geluWideVectors(_ values: UnsafeMutablePointer<Float>, count: Int) {
        sam_gelu_avx512(values, Int64(count))
    }
}
