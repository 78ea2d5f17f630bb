// See include/vector_math.h. ref: Sources/SAMKernels/DepthwiseConv2d.swift Kernels.depthwise3x3Row,
// the operation order this file keeps: per output, sum = bias, then for each of the three rows
// sum += (k0 * left + k1 * centre) + k2 * right, every multiply and add rounded apart (no fused
// multiply-add), so each output has the Swift loop's bits whatever its lane.
#include "vector_math.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#define SAM_AVX512 __attribute__((target("avx512f")))

// One input row's three taps for sixteen outputs, added to sum.
SAM_AVX512 static inline __m512 add_row(__m512 sum, __m512 left, __m512 centre, __m512 right, const float *k) {
    const __m512 pair = _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(k[0]), left), _mm512_mul_ps(_mm512_set1_ps(k[1]), centre));
    return _mm512_add_ps(sum, _mm512_add_ps(pair, _mm512_mul_ps(_mm512_set1_ps(k[2]), right)));
}

// The taps of sixteen stride-1 outputs from `column` (n of them valid: lanes past n read nothing).
SAM_AVX512 static inline __m512 stride1(const float *const rows[3], int64_t column, __mmask16 valid, const float k[9],
                                        __m512 bias) {
    __m512 sum = bias;
    for (int r = 0; r < 3; r++) {
        const float *in = rows[r] + column;
        sum = add_row(sum, _mm512_maskz_loadu_ps(valid, in), _mm512_maskz_loadu_ps(valid, in + 1),
                      _mm512_maskz_loadu_ps(valid, in + 2), k + 3 * r);
    }
    return sum;
}

// Lanes i < 16 of the floats at in[2i] (`odd` 0) or in[2i + 1] (`odd` 1), reading only the first `count`.
SAM_AVX512 static inline __m512 every_other(const float *in, int64_t count, int odd) {
    const __m512i index = _mm512_add_epi32(_mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0),
                                           _mm512_set1_epi32(odd));
    const __mmask16 low = count >= 16 ? 0xFFFF : count <= 0 ? 0 : (__mmask16)((1u << count) - 1);
    const __mmask16 high = count >= 32 ? 0xFFFF : count <= 16 ? 0 : (__mmask16)((1u << (count - 16)) - 1);
    return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(low, in), index, _mm512_maskz_loadu_ps(high, in + 16));
}

// Sixteen stride-2 outputs from input `column`: inputs column + 2i, + 2i + 1 and + 2i + 2 for lane i, reading
// only the `inputs` floats from column (2n + 1 for n outputs).
SAM_AVX512 static inline __m512 stride2(const float *const rows[3], int64_t column, int64_t inputs, const float k[9],
                                        __m512 bias) {
    __m512 sum = bias;
    for (int r = 0; r < 3; r++) {
        const float *in = rows[r] + column;
        sum = add_row(sum, every_other(in, inputs, 0), every_other(in, inputs, 1), every_other(in + 2, inputs - 2, 0),
                      k + 3 * r);
    }
    return sum;
}

SAM_AVX512 void sam_depthwise3x3_row_avx512(const float *top, const float *middle, const float *bottom, float *out,
                                            int64_t first_column, int64_t end_column, int64_t stride, int64_t padding,
                                            const float k[9], float bias) {
    const float *rows[3] = {top, middle, bottom};
    const __m512 biases = _mm512_set1_ps(bias);
    int64_t ox = first_column;
    // Whole vectors with whole loads and stores: masked ones cost more on Zen 5 even when every lane is on.
    for (; ox + 16 <= end_column; ox += 16) {
        const int64_t column = ox * stride - padding;
        const __m512 sum = stride == 1 ? stride1(rows, column, 0xFFFF, k, biases) : stride2(rows, column, 2 * 16 + 1, k, biases);
        _mm512_storeu_ps(out + ox, sum);
    }
    if (ox < end_column) {
        const int64_t n = end_column - ox;
        const __mmask16 valid = (__mmask16)((1u << n) - 1);
        const int64_t column = ox * stride - padding;
        const __m512 sum = stride == 1 ? stride1(rows, column, valid, k, biases) : stride2(rows, column, 2 * n + 1, k, biases);
        _mm512_mask_storeu_ps(out + ox, valid, sum);
    }
}

#else

void sam_depthwise3x3_row_avx512(const float *top, const float *middle, const float *bottom, float *out,
                                 int64_t first_column, int64_t end_column, int64_t stride, int64_t padding,
                                 const float k[9], float bias) {
    (void)top; (void)middle; (void)bottom; (void)out; (void)first_column; (void)end_column; (void)stride; (void)padding;
    (void)k; (void)bias;
    __builtin_trap();
}

#endif
