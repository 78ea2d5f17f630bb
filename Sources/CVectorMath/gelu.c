// See include/vector_math.h. ref: Sources/SAMKernels/GELU.swift Kernels.gelu8 and erf8, and
// GELUTanh.swift Kernels.geluTanh8: the operation orders this file keeps.
#include "vector_math.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#include "wide_vectors.h"

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

SAM_AVX512 void sam_gelu_avx512(float *values, int64_t count) { SAM_MAP_IN_PLACE(gelu16, values, count); }

// -x, as Swift's prefix minus: the sign bit flipped (so -(+0) is -0, which 0 - x would not give).
SAM_AVX512 static inline __m512 negated(__m512 x) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u)));
}

// Kernels.geluTanh8 on sixteen lanes: x * σ(2u), u = √(2/π) (x + 0.044715 x³), from e = e^-|2u|.
SAM_AVX512 static inline __m512 gelu_tanh16(__m512 x) {
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 inner = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_mul_ps(x, x), x), _mm512_set1_ps(0.044715f), x);
    __m512 z = _mm512_mul_ps(_mm512_set1_ps(2.0f * 0.7978845608028654f), inner);
    __mmask16 negative = _mm512_cmp_ps_mask(z, _mm512_setzero_ps(), _CMP_LT_OQ);
    __m512 magnitude = _mm512_mask_blend_ps(negative, z, negated(z));
    __m512 e = exp16(negated(magnitude));
    e = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(magnitude, _mm512_set1_ps(87.0f), _CMP_GT_OQ), e, _mm512_setzero_ps());
    __m512 numerator = _mm512_mask_blend_ps(negative, one, e);
    return _mm512_mul_ps(x, _mm512_div_ps(numerator, _mm512_add_ps(one, e)));
}

SAM_AVX512 void sam_gelu_tanh_avx512(float *values, int64_t count) { SAM_MAP_IN_PLACE(gelu_tanh16, values, count); }

#else

void sam_gelu_avx512(float *values, int64_t count) {
    (void)values; (void)count;
    __builtin_trap();
}

void sam_gelu_tanh_avx512(float *values, int64_t count) {
    (void)values; (void)count;
    __builtin_trap();
}

#endif
