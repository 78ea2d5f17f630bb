// See include/vector_math.h. ref: Sources/SAMKernels/TransposedRelativeTables.swift, whose groups of
// queries sharing one table this computes.
#include "vector_math.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#define SAM_AVX512 __attribute__((target("avx512f,fma")))

// Three rows by sixteen keys from `column`: each sum in eight chains (inputs d with d % 8 = c), then
// ((c0 + c4) + (c1 + c5)) + ((c2 + c6) + (c3 + c7)). One chain over the 64 inputs of a ViT head
// carried about twice the rounding error of the eight-lane dot products this replaces (samverify on
// ViT-B moved from 2.90e-6 to 2.94e-6 mean error); eight chains match them.
SAM_AVX512 static inline void block3(const float *const a[3], const float *transposed, int64_t lanes, int64_t depth,
                                     int64_t column, float *const out[3]) {
    __m512 s[3][8];
    for (int i = 0; i < 3; i++) {
        for (int c = 0; c < 8; c++) s[i][c] = _mm512_setzero_ps();
    }
    int64_t d = 0;
    for (; d + 8 <= depth; d += 8) {
        for (int c = 0; c < 8; c++) {
            const __m512 w = _mm512_loadu_ps(transposed + (d + c) * lanes + column);
            for (int i = 0; i < 3; i++) s[i][c] = _mm512_fmadd_ps(_mm512_set1_ps(a[i][d + c]), w, s[i][c]);
        }
    }
    for (int c = 0; d < depth; d++, c++) {
        const __m512 w = _mm512_loadu_ps(transposed + d * lanes + column);
        for (int i = 0; i < 3; i++) s[i][c] = _mm512_fmadd_ps(_mm512_set1_ps(a[i][d]), w, s[i][c]);
    }
    for (int i = 0; i < 3; i++) {
        const __m512 low = _mm512_add_ps(_mm512_add_ps(s[i][0], s[i][4]), _mm512_add_ps(s[i][1], s[i][5]));
        const __m512 high = _mm512_add_ps(_mm512_add_ps(s[i][2], s[i][6]), _mm512_add_ps(s[i][3], s[i][7]));
        _mm512_storeu_ps(out[i] + column, _mm512_add_ps(low, high));
    }
}

SAM_AVX512 void sam_relative_positions_avx512(const float *x, int64_t x_stride, int64_t rows, int64_t depth,
                                              const float *transposed, int64_t lanes, float *out, int64_t out_stride) {
    for (int64_t r = 0; r < rows; r += 3) {
        // Rows past the end repeat the last row; their stores rewrite it with the same values.
        const float *rows_x[3];
        float *rows_out[3];
        for (int i = 0; i < 3; i++) {
            const int64_t row = r + i < rows ? r + i : rows - 1;
            rows_x[i] = x + row * x_stride;
            rows_out[i] = out + row * out_stride;
        }
        for (int64_t column = 0; column < lanes; column += 16) block3(rows_x, transposed, lanes, depth, column, rows_out);
    }
}

#else

void sam_relative_positions_avx512(const float *x, int64_t x_stride, int64_t rows, int64_t depth,
                                   const float *transposed, int64_t lanes, float *out, int64_t out_stride) {
    (void)x; (void)x_stride; (void)rows; (void)depth; (void)transposed; (void)lanes; (void)out; (void)out_stride;
    __builtin_trap();
}

#endif
