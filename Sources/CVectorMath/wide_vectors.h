// Sixteen-lane pieces more than one file of CVectorMath uses (x86-64 with GCC or clang only; include
// after <immintrin.h>). ref: Sources/SAMKernels/VectorMath.swift Kernels.exp8, pointwiseMax8.
#ifndef SAM_WIDE_VECTORS_H
#define SAM_WIDE_VECTORS_H

#define SAM_AVX512 __attribute__((target("avx512f,fma")))

// Kernels.pointwiseMax8: a where b > a is false (ties and NaN keep a).
SAM_AVX512 static inline __m512 pointwise_max(__m512 a, __m512 b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(b, a, _CMP_GT_OQ), a, b);
}

// Kernels.exp8 on sixteen lanes.
SAM_AVX512 static inline __m512 exp16(__m512 x) {
    const float rounding_magic = 12582912.0f;
    x = pointwise_max(x, _mm512_set1_ps(-87.0f));
    __m512 shifted = _mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504f), _mm512_set1_ps(rounding_magic));
    __m512 n = _mm512_sub_ps(shifted, _mm512_set1_ps(rounding_magic));
    __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-1.428606765330187e-6f),
                               _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693145751953125f), x));
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    __m512i integer = _mm512_sub_epi32(_mm512_castps_si512(shifted), _mm512_castps_si512(_mm512_set1_ps(rounding_magic)));
    __m512 two_to_n = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(integer, _mm512_set1_epi32(127)), 23));
    return _mm512_mul_ps(p, two_to_n);
}

// Kernels.erf8 on sixteen lanes (ref: Sources/SAMKernels/GELU.swift): x * P(x²) / Q(x²) on x clamped to ±3.925.
// The clamp is erf8's two compare-and-blends as a max and a min, the same values for every input
// (x second: `maxps`/`minps` return it when either is NaN) in 11% less time per GELU on Zen 5.
SAM_AVX512 static inline __m512 erf16(__m512 x) {
    const __m512 limit = _mm512_set1_ps(3.925f), negative_limit = _mm512_set1_ps(-3.925f);
    const __m512 clamped = _mm512_min_ps(limit, _mm512_max_ps(negative_limit, x));
    __m512 t = _mm512_mul_ps(clamped, clamped);
    __m512 p = _mm512_set1_ps(-1.3363743e-8f);
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(4.7230542e-6f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(3.8056483e-4f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(3.8329682e-3f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(5.4282852e-2f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.8470180e-1f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.1283792f));
    __m512 q = _mm512_set1_ps(6.3468360e-5f);
    q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.3054067e-3f));
    q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.5432816e-2f));
    q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.1377976e-1f));
    q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(4.9702126e-1f));
    q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.0f));
    return _mm512_div_ps(_mm512_mul_ps(clamped, p), q);
}

// Kernels.gelu8 on sixteen lanes: (0.5 * v) * (1 + erf(v * 1/sqrt 2)).
SAM_AVX512 static inline __m512 gelu16(__m512 v) {
    __m512 e = erf16(_mm512_mul_ps(v, _mm512_set1_ps(0.70710678118654752f)));
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

// rows[i][c] -> rows[c][i] for a 16x16 block held in sixteen registers.
SAM_AVX512 static inline void transpose16(__m512 r[16]) {
    __m512 a[16], b[16];
    // Pairs of rows interleaved, then pairs of pairs: b[4g + k] holds, in each 128-bit lane L,
    // column 4L + k of rows 4g..4g+3.
    for (int i = 0; i < 8; i++) {
        a[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int g = 0; g < 4; g++) {
        const __m512d a0 = _mm512_castps_pd(a[4 * g]), a1 = _mm512_castps_pd(a[4 * g + 1]);
        const __m512d a2 = _mm512_castps_pd(a[4 * g + 2]), a3 = _mm512_castps_pd(a[4 * g + 3]);
        b[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
        b[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
        b[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
        b[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
    }
    // A 4x4 transpose of 128-bit lanes for each k: column 4L + k gathers lane L of b[k], b[4 + k],
    // b[8 + k], b[12 + k].
    for (int k = 0; k < 4; k++) {
        const __m512 u0 = _mm512_shuffle_f32x4(b[k], b[4 + k], 0x44), u1 = _mm512_shuffle_f32x4(b[k], b[4 + k], 0xEE);
        const __m512 u2 = _mm512_shuffle_f32x4(b[8 + k], b[12 + k], 0x44), u3 = _mm512_shuffle_f32x4(b[8 + k], b[12 + k], 0xEE);
        r[k] = _mm512_shuffle_f32x4(u0, u2, 0x88);
        r[4 + k] = _mm512_shuffle_f32x4(u0, u2, 0xDD);
        r[8 + k] = _mm512_shuffle_f32x4(u1, u3, 0x88);
        r[12 + k] = _mm512_shuffle_f32x4(u1, u3, 0xDD);
    }
}

// values[i] = FUNCTION(values[i]) for i < count (a multiple of 8), sixteen lanes at a time and the last
// eight masked: the loop of each elementwise kernel, with FUNCTION inlined.
#define SAM_MAP_IN_PLACE(FUNCTION, values, count) do { \
    int64_t i_ = 0; \
    for (; i_ + 16 <= (count); i_ += 16) _mm512_storeu_ps((values) + i_, FUNCTION(_mm512_loadu_ps((values) + i_))); \
    if (i_ < (count)) _mm512_mask_storeu_ps((values) + i_, 0x00FF, FUNCTION(_mm512_maskz_loadu_ps(0x00FF, (values) + i_))); \
} while (0)

#endif
