// See include/vector_math.h. ref: Sources/SAMKernels/GELU.swift Kernels.gelu8 and erf8, the
// operation order this file keeps.
#include "vector_math.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#define SAM_AVX512 __attribute__((target("avx512f,fma")))

// Kernels.erf8 on sixteen lanes: x * P(x²) / Q(x²) on x clamped to ±3.925.
SAM_AVX512 static inline __m512 erf16(__m512 x) {
    const __m512 limit = _mm512_set1_ps(3.925f), negative_limit = _mm512_set1_ps(-3.925f);
    __m512 clamped = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, limit, _CMP_GT_OQ), x, limit);
    clamped = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(clamped, negative_limit, _CMP_LT_OQ), clamped, negative_limit);
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

SAM_AVX512 void sam_gelu_avx512(float *values, int64_t count) {
    int64_t i = 0;
    for (; i + 16 <= count; i += 16) _mm512_storeu_ps(values + i, gelu16(_mm512_loadu_ps(values + i)));
    if (i < count) {  // eight left (count is a multiple of 8)
        const __mmask16 half = 0x00FF;
        _mm512_mask_storeu_ps(values + i, half, gelu16(_mm512_maskz_loadu_ps(half, values + i)));
    }
}

#else

void sam_gelu_avx512(float *values, int64_t count) {
    (void)values; (void)count;
    __builtin_trap();
}

#endif
