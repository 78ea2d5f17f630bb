// See include/vector_math.h. ref: Sources/SAMImage/MaskPostprocessor.swift
// TorchBilinear.Plan2D.resizeWidth, the operation order this file keeps: each output is
// fma(x0, w0, x1 * w1), one rounding for the product x1 * w1 and one for the fused sum.
#include "vector_math.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#define SAM_AVX512 __attribute__((target("avx512f,fma")))

// An upscale's taps for sixteen neighbouring outputs lie within sixteen neighbouring inputs, so
// one load and two lane permutes gather them (instead of sixteen pairs of scalar loads).
SAM_AVX512 void sam_resize_width_avx512(const float *source, const int32_t *bases, const int32_t *lanes0,
                                        const int32_t *lanes1, const float *w0, const float *w1, int64_t blocks,
                                        float *out) {
    for (int64_t b = 0; b < blocks; b++) {
        const __m512 inputs = _mm512_loadu_ps(source + bases[b]);
        const __m512 x0 = _mm512_permutexvar_ps(_mm512_loadu_si512(lanes0 + 16 * b), inputs);
        const __m512 x1 = _mm512_permutexvar_ps(_mm512_loadu_si512(lanes1 + 16 * b), inputs);
        const __m512 product = _mm512_mul_ps(x1, _mm512_loadu_ps(w1 + 16 * b));
        _mm512_storeu_ps(out + 16 * b, _mm512_fmadd_ps(x0, _mm512_loadu_ps(w0 + 16 * b), product));
    }
}

#else

void sam_resize_width_avx512(const float *source, const int32_t *bases, const int32_t *lanes0, const int32_t *lanes1,
                             const float *w0, const float *w1, int64_t blocks, float *out) {
    (void)source; (void)bases; (void)lanes0; (void)lanes1; (void)w0; (void)w1; (void)blocks; (void)out;
    __builtin_trap();
}

#endif
