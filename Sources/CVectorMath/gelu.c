// See include/vector_math.h. ref: Sources/SAMKernels/GELU.swift Kernels.gelu8 and erf8, and
// GELUTanh.swift Kernels.geluTanh8: the operation orders this file keeps.
#include "vector_math.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#include "wide_vectors.h"

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
