// See include/vector_math.h. ref: Sources/SAMImage/MaskPostprocessor.swift
// TorchBilinear.Plan2D.resizeWidth, the operation order this file keeps: each output is
// fma(x0, w0, x1 * w1), one rounding for the product x1 * w1 and one for the fused sum.
#include "vector_math.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#define SAM_AVX512 __attribute__((target("avx512f,fma")))

// An upscale's taps for sixteen neighbouring outputs lie within sixteen neighbouring inputs, so
// one load and two lane permutes gather them (instead of sixteen pairs of scalar loads); the blocks
// of a run share their lane offsets and weights, which stay in registers.
SAM_AVX512 void sam_resize_width_runs_avx512(const float *source, const int32_t *run_bases, const int32_t *run_steps,
                                             const int32_t *run_counts, int64_t runs, const int32_t *lanes0,
                                             const int32_t *lanes1, const float *w0, const float *w1, float *out) {
    for (int64_t r = 0; r < runs; r++) {
        const __m512i taps0 = _mm512_loadu_si512(lanes0 + 16 * r), taps1 = _mm512_loadu_si512(lanes1 + 16 * r);
        const __m512 weights0 = _mm512_loadu_ps(w0 + 16 * r), weights1 = _mm512_loadu_ps(w1 + 16 * r);
        const float *inputs_at = source + run_bases[r];
        for (int32_t b = 0; b < run_counts[r]; b++, inputs_at += run_steps[r], out += 16) {
            const __m512 inputs = _mm512_loadu_ps(inputs_at);
            const __m512 product = _mm512_mul_ps(_mm512_permutexvar_ps(taps1, inputs), weights1);
            _mm512_storeu_ps(out, _mm512_fmadd_ps(_mm512_permutexvar_ps(taps0, inputs), weights0, product));
        }
    }
}

// A full-size mask is tens of megabytes, written once and not read back here: streaming stores
// skip reading each output line into the cache before overwriting it (half the memory traffic).
SAM_AVX512 void sam_blend_rows_streaming_avx512(const float *top, float w0, const float *bottom, float w1,
                                                int64_t count, float *out) {
    const __m512 weight0 = _mm512_set1_ps(w0), weight1 = _mm512_set1_ps(w1);
    // Ordinary (masked) stores up to the first 64-byte boundary and for the tail.
    int64_t head = (int64_t)((64 - ((uintptr_t)out & 63)) & 63) / (int64_t)sizeof(float);
    if ((uintptr_t)out % sizeof(float) != 0 || head > count) head = count;
    int64_t x = 0;
    for (; x < head; x += 16) {
        const int64_t n = head - x < 16 ? head - x : 16;
        const __mmask16 mask = (__mmask16)((1u << n) - 1);
        const __m512 product = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, bottom + x), weight1);
        _mm512_mask_storeu_ps(out + x, mask, _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, top + x), weight0, product));
    }
    x = head;
    for (; x + 16 <= count; x += 16) {
        const __m512 product = _mm512_mul_ps(_mm512_loadu_ps(bottom + x), weight1);
        _mm512_stream_ps(out + x, _mm512_fmadd_ps(_mm512_loadu_ps(top + x), weight0, product));
    }
    if (x < count) {
        const __mmask16 mask = (__mmask16)((1u << (count - x)) - 1);
        const __m512 product = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, bottom + x), weight1);
        _mm512_mask_storeu_ps(out + x, mask, _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, top + x), weight0, product));
    }
    // Streaming stores are weakly ordered: make them visible before another thread reads out.
    _mm_sfence();
}

#else

void sam_resize_width_runs_avx512(const float *source, const int32_t *run_bases, const int32_t *run_steps,
                                  const int32_t *run_counts, int64_t runs, const int32_t *lanes0,
                                  const int32_t *lanes1, const float *w0, const float *w1, float *out) {
    (void)source; (void)run_bases; (void)run_steps; (void)run_counts; (void)runs; (void)lanes0; (void)lanes1;
    (void)w0; (void)w1; (void)out;
    __builtin_trap();
}

void sam_blend_rows_streaming_avx512(const float *top, float w0, const float *bottom, float w1, int64_t count,
                                     float *out) {
    (void)top; (void)w0; (void)bottom; (void)w1; (void)count; (void)out;
    __builtin_trap();
}

#endif
