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

// values[i] = FUNCTION(values[i]) for i < count (a multiple of 8), sixteen lanes at a time and the last
// eight masked: the loop of each elementwise kernel, with FUNCTION inlined.
#define SAM_MAP_IN_PLACE(FUNCTION, values, count) do { \
    int64_t i_ = 0; \
    for (; i_ + 16 <= (count); i_ += 16) _mm512_storeu_ps((values) + i_, FUNCTION(_mm512_loadu_ps((values) + i_))); \
    if (i_ < (count)) _mm512_mask_storeu_ps((values) + i_, 0x00FF, FUNCTION(_mm512_maskz_loadu_ps(0x00FF, (values) + i_))); \
} while (0)

#endif
