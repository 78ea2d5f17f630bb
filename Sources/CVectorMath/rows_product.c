// See include/vector_math.h. ref: Sources/SAMKernels/AttentionSmallHeads.swift
// Kernels.scaledRowsProduct, the operation order this file keeps: every element is a fused
// multiply-add chain over t from zero, then one multiply by its row's scale. How columns are
// grouped into vectors does not change any element, so wider blocks give the same bits.
#include "vector_math.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#define SAM_AVX512 __attribute__((target("avx512f,fma")))

// Six rows (a[i], out[i], scale[i]), thirty-two columns from c: twelve accumulators.
SAM_AVX512 static inline void block32(const float *const a[6], const float *b, int64_t b_stride, int64_t depth,
                                      int64_t c, const float scale[6], float *const out[6]) {
    __m512 s0[6], s1[6];
    for (int i = 0; i < 6; i++) s0[i] = s1[i] = _mm512_setzero_ps();
    for (int64_t t = 0; t < depth; t++) {
        const __m512 b0 = _mm512_loadu_ps(b + t * b_stride + c), b1 = _mm512_loadu_ps(b + t * b_stride + c + 16);
        for (int i = 0; i < 6; i++) {
            const __m512 x = _mm512_set1_ps(a[i][t]);
            s0[i] = _mm512_fmadd_ps(x, b0, s0[i]);
            s1[i] = _mm512_fmadd_ps(x, b1, s1[i]);
        }
    }
    for (int i = 0; i < 6; i++) {
        _mm512_storeu_ps(out[i] + c, _mm512_mul_ps(_mm512_set1_ps(scale[i]), s0[i]));
        _mm512_storeu_ps(out[i] + c + 16, _mm512_mul_ps(_mm512_set1_ps(scale[i]), s1[i]));
    }
}

// Six rows, eight or sixteen columns from c (mask 0x00FF or 0xFFFF).
SAM_AVX512 static inline void block16(const float *const a[6], const float *b, int64_t b_stride, int64_t depth,
                                      int64_t c, __mmask16 lanes, const float scale[6], float *const out[6]) {
    __m512 s[6];
    for (int i = 0; i < 6; i++) s[i] = _mm512_setzero_ps();
    for (int64_t t = 0; t < depth; t++) {
        const __m512 b0 = _mm512_maskz_loadu_ps(lanes, b + t * b_stride + c);
        for (int i = 0; i < 6; i++) s[i] = _mm512_fmadd_ps(_mm512_set1_ps(a[i][t]), b0, s[i]);
    }
    for (int i = 0; i < 6; i++) _mm512_mask_storeu_ps(out[i] + c, lanes, _mm512_mul_ps(_mm512_set1_ps(scale[i]), s[i]));
}

SAM_AVX512 void sam_rows_product_avx512(const float *a, int64_t a_stride, int64_t rows, int64_t depth,
                                        const float *b, int64_t b_stride, int64_t columns,
                                        const float *row_scales, int64_t scale_stride,
                                        float *out, int64_t out_stride) {
    for (int64_t r = 0; r < rows; r += 6) {
        // Rows past the end repeat the last row; their stores rewrite it with the same values.
        const float *rows_a[6];
        float *rows_out[6];
        float scales[6];
        for (int i = 0; i < 6; i++) {
            const int64_t row = r + i < rows ? r + i : rows - 1;
            rows_a[i] = a + row * a_stride;
            rows_out[i] = out + row * out_stride;
            scales[i] = row_scales[row * scale_stride];
        }
        int64_t c = 0;
        for (; c + 32 <= columns; c += 32) block32(rows_a, b, b_stride, depth, c, scales, rows_out);
        for (; c + 16 <= columns; c += 16) block16(rows_a, b, b_stride, depth, c, 0xFFFF, scales, rows_out);
        if (c + 8 <= columns) block16(rows_a, b, b_stride, depth, c, 0x00FF, scales, rows_out);
    }
}

#else

void sam_rows_product_avx512(const float *a, int64_t a_stride, int64_t rows, int64_t depth,
                             const float *b, int64_t b_stride, int64_t columns,
                             const float *row_scales, int64_t scale_stride,
                             float *out, int64_t out_stride) {
    (void)a; (void)a_stride; (void)rows; (void)depth; (void)b; (void)b_stride; (void)columns;
    (void)row_scales; (void)scale_stride; (void)out; (void)out_stride;
    __builtin_trap();
}

#endif
