// See include/vector_math.h. ref: Sources/SAMKernels/AttentionSmallHeads.swift, whose operation
// order this file keeps for every element: the scores' fused multiply-add chains over d then the
// scale, each row's maximum, exp16 of the difference, eight-lane sums folded as Kernels.horizontalSum
// folds them, the values' chains over keys then the row's 1 / sum. Only the layout differs: sixteen
// queries sit on the lanes, so a softmax over a few dozen keys needs no horizontal steps.
#include "vector_math.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>
#include "wide_vectors.h"

// One key's score for the sixteen queries of qt (qt[d]: dimension d of each query), scaled.
SAM_AVX512 static inline __m512 score(const __m512 qt[16], const float *key, __m512 scale) {
    __m512 s = _mm512_setzero_ps();
    for (int d = 0; d < 16; d++) s = _mm512_fmadd_ps(_mm512_set1_ps(key[d]), qt[d], s);
    return _mm512_mul_ps(scale, s);
}

SAM_AVX512 void sam_attention_query_lanes_avx512(const float *q, int64_t q_stride, int64_t rows,
                                                 const float *k, int64_t k_stride, const float *v, int64_t v_stride,
                                                 int64_t keys, float scale, float *scratch,
                                                 float *out, int64_t out_stride) {
    const __m512 scale16 = _mm512_set1_ps(scale), none = _mm512_set1_ps(-__builtin_inff());
    // What a padding key (score -inf) adds to its lane's sum in the row layout.
    const __m512 padding_exp = exp16(none);
    const int64_t padded_keys = (keys + 7) & ~(int64_t)7;
    for (int64_t first = 0; first < rows; first += 16) {
        const int64_t count = rows - first < 16 ? rows - first : 16;
        __m512 qt[16];
        for (int i = 0; i < 16; i++) qt[i] = i < count ? _mm512_loadu_ps(q + (first + i) * q_stride) : _mm512_setzero_ps();
        transpose16(qt);
        // Scores, four keys' chains at a time, and each query's maximum.
        __m512 maxima = none;
        int64_t j = 0;
        for (; j + 4 <= keys; j += 4) {
            const __m512 s0 = score(qt, k + j * k_stride, scale16), s1 = score(qt, k + (j + 1) * k_stride, scale16);
            const __m512 s2 = score(qt, k + (j + 2) * k_stride, scale16), s3 = score(qt, k + (j + 3) * k_stride, scale16);
            _mm512_storeu_ps(scratch + j * 16, s0);
            _mm512_storeu_ps(scratch + (j + 1) * 16, s1);
            _mm512_storeu_ps(scratch + (j + 2) * 16, s2);
            _mm512_storeu_ps(scratch + (j + 3) * 16, s3);
            maxima = pointwise_max(pointwise_max(pointwise_max(pointwise_max(maxima, s0), s1), s2), s3);
        }
        for (; j < keys; j++) {
            const __m512 s = score(qt, k + j * k_stride, scale16);
            _mm512_storeu_ps(scratch + j * 16, s);
            maxima = pointwise_max(maxima, s);
        }
        // Numerators in place; key j's goes to lane sum j % 8, as the row layout's eight-lane sums,
        // eight keys per step so the sums stay in registers (the padding keys' in the last step).
        __m512 sums[8];
        for (int l = 0; l < 8; l++) sums[l] = _mm512_setzero_ps();
        for (j = 0; j < padded_keys; j += 8) {
#pragma clang loop unroll(full)
            for (int l = 0; l < 8; l++) {
                __m512 e = padding_exp;
                if (j + l < keys) {
                    e = exp16(_mm512_sub_ps(_mm512_loadu_ps(scratch + (j + l) * 16), maxima));
                    _mm512_storeu_ps(scratch + (j + l) * 16, e);
                }
                sums[l] = _mm512_add_ps(sums[l], e);
            }
        }
        const __m512 total = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(sums[0], sums[4]), _mm512_add_ps(sums[1], sums[5])),
                                           _mm512_add_ps(_mm512_add_ps(sums[2], sums[6]), _mm512_add_ps(sums[3], sums[7])));
        const __m512 inverse = _mm512_div_ps(_mm512_set1_ps(1.0f), total);
        // Values: o[c] holds value dimension c of each query.
        __m512 o[16];
        for (int c = 0; c < 16; c++) o[c] = _mm512_setzero_ps();
        for (j = 0; j < keys; j++) {
            const __m512 e = _mm512_loadu_ps(scratch + j * 16);
            const float *value = v + j * v_stride;
            for (int c = 0; c < 16; c++) o[c] = _mm512_fmadd_ps(_mm512_set1_ps(value[c]), e, o[c]);
        }
        for (int c = 0; c < 16; c++) o[c] = _mm512_mul_ps(inverse, o[c]);
        transpose16(o);
        for (int i = 0; i < count; i++) _mm512_storeu_ps(out + (first + i) * out_stride, o[i]);
    }
}

#else

void sam_attention_query_lanes_avx512(const float *q, int64_t q_stride, int64_t rows,
                                      const float *k, int64_t k_stride, const float *v, int64_t v_stride,
                                      int64_t keys, float scale, float *scratch,
                                      float *out, int64_t out_stride) {
    (void)q; (void)q_stride; (void)rows; (void)k; (void)k_stride; (void)v; (void)v_stride;
    (void)keys; (void)scale; (void)scratch; (void)out; (void)out_stride;
    __builtin_trap();
}

#endif
