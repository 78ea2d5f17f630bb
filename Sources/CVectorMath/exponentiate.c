// See include/vector_math.h. ref: Sources/SAMKernels/VectorMath.swift Kernels.exp8, the
// operation order this file keeps.
#include "vector_math.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

int sam_vector_math_has_avx512(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}

#define SAM_AVX512 __attribute__((target("avx512f,fma")))

// Kernels.pointwiseMax8: a where b > a is false (ties and NaN keep a).
SAM_AVX512 static inline __m512 pointwise_max(__m512 a, __m512 b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(b, a, _CMP_GT_OQ), a, b);
}

// The largest of the sixteen lanes, compared one by one (-inf lanes stand for none).
SAM_AVX512 static inline float largest_lane(__m512 maxima) {
    float lanes[16], largest = -__builtin_inff();
    _mm512_storeu_ps(lanes, maxima);
    for (int lane = 0; lane < 16; lane++) largest = lanes[lane] > largest ? lanes[lane] : largest;
    return largest;
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

SAM_AVX512 void sam_exponentiate_avx512(float *row, int64_t count, float shift, float sums[8]) {
    const __m512 minus = _mm512_set1_ps(shift);
    // Eight-lane sums, element j into lane j % 8: a sixteen-float chunk adds its low half, then its high half.
    __m256 low_sums = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 16 <= count; j += 16) {
        __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(row + j), minus));
        _mm512_storeu_ps(row + j, e);
        low_sums = _mm256_add_ps(low_sums, _mm512_castps512_ps256(e));
        low_sums = _mm256_add_ps(low_sums, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1)));
    }
    if (j < count) {  // eight left (count is a multiple of 8)
        const __mmask16 half = 0x00FF;
        __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(half, row + j), minus));
        _mm512_mask_storeu_ps(row + j, half, e);
        low_sums = _mm256_add_ps(low_sums, _mm512_castps512_ps256(e));
    }
    _mm256_storeu_ps(sums, low_sums);
}

SAM_AVX512 float sam_maximum_avx512(const float *row, int64_t count) {
    // The largest value whatever the order of comparisons: lane maxima, then across lanes.
    __m512 maxima = _mm512_set1_ps(-__builtin_inff());
    int64_t j = 0;
    for (; j + 16 <= count; j += 16) maxima = pointwise_max(maxima, _mm512_loadu_ps(row + j));
    if (j < count) maxima = pointwise_max(maxima, _mm512_mask_loadu_ps(_mm512_set1_ps(-__builtin_inff()), 0x00FF, row + j));
    return largest_lane(maxima);
}

SAM_AVX512 void sam_softmax_numerators_avx512(float *rows_base, int64_t rows, int64_t count, float *inverse_sums) {
    for (int64_t r = 0; r < rows; r++) {
        float *row = rows_base + r * count, lanes[8];
        sam_exponentiate_avx512(row, count, sam_maximum_avx512(row, count), lanes);
        inverse_sums[r] = 1.0f / (((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7])));
    }
}

// The scores of a grid row's keys plus their relative positions, columns from `column` under `mask`.
SAM_AVX512 static inline __m512 with_relative_positions(const float *segment, __m512 height, const float *widths,
                                                         int64_t column, __mmask16 mask) {
    return _mm512_add_ps(_mm512_maskz_loadu_ps(mask, segment + column),
                         _mm512_add_ps(height, _mm512_maskz_loadu_ps(mask, widths + column)));
}

SAM_AVX512 float sam_relative_softmax_numerators_avx512(float *row, const float *heights, const float *widths,
                                                        int64_t grid_height, int64_t grid_width) {
    // Pass 1: the largest score with its relative positions (masked-off lanes read as 0 and are not compared).
    __m512 maxima = _mm512_set1_ps(-__builtin_inff());
    for (int64_t key_row = 0; key_row < grid_height; key_row++) {
        const float *segment = row + key_row * grid_width;
        const __m512 height = _mm512_set1_ps(heights[key_row]);
        for (int64_t column = 0; column < grid_width; column += 16) {
            const __mmask16 mask = grid_width - column >= 16 ? 0xFFFF : (__mmask16)((1u << (grid_width - column)) - 1);
            const __m512 x = with_relative_positions(segment, height, widths, column, mask);
            maxima = _mm512_mask_blend_ps(_mm512_mask_cmp_ps_mask(mask, x, maxima, _CMP_GT_OQ), maxima, x);
        }
    }
    const float largest = largest_lane(maxima);
    // Pass 2: the same sums again, exponentiated and stored, and their total.
    const __m512 shift = _mm512_set1_ps(largest);
    __m512 sums = _mm512_setzero_ps();
    for (int64_t key_row = 0; key_row < grid_height; key_row++) {
        float *segment = row + key_row * grid_width;
        const __m512 height = _mm512_set1_ps(heights[key_row]);
        for (int64_t column = 0; column < grid_width; column += 16) {
            const __mmask16 mask = grid_width - column >= 16 ? 0xFFFF : (__mmask16)((1u << (grid_width - column)) - 1);
            const __m512 e = exp16(_mm512_sub_ps(with_relative_positions(segment, height, widths, column, mask), shift));
            _mm512_mask_storeu_ps(segment + column, mask, e);
            sums = _mm512_mask_add_ps(sums, mask, sums, e);
        }
    }
    return 1.0f / _mm512_reduce_add_ps(sums);
}

SAM_AVX512 void sam_scale_avx512(float *row, int64_t count, float factor) {
    const __m512 scale = _mm512_set1_ps(factor);
    int64_t j = 0;
    for (; j + 16 <= count; j += 16) _mm512_storeu_ps(row + j, _mm512_mul_ps(_mm512_loadu_ps(row + j), scale));
    if (j < count) _mm512_mask_storeu_ps(row + j, 0x00FF, _mm512_mul_ps(_mm512_maskz_loadu_ps(0x00FF, row + j), scale));
}

// Kernels.geluTanh8 on sixteen lanes: x * σ(2u), u = √(2/π) (x + 0.044715 x³), from e = e^-|2u|.
// -x, as Swift's prefix minus: the sign bit flipped (so -(+0) is -0, which 0 - x would not give).
SAM_AVX512 static inline __m512 negated(__m512 x) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u)));
}

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

SAM_AVX512 void sam_gelu_tanh_avx512(float *values, int64_t count) {
    int64_t i = 0;
    for (; i + 16 <= count; i += 16) _mm512_storeu_ps(values + i, gelu_tanh16(_mm512_loadu_ps(values + i)));
    if (i < count) {  // eight left (count is a multiple of 8)
        const __mmask16 half = 0x00FF;
        _mm512_mask_storeu_ps(values + i, half, gelu_tanh16(_mm512_maskz_loadu_ps(half, values + i)));
    }
}

#else

int sam_vector_math_has_avx512(void) { return 0; }

float sam_maximum_avx512(const float *row, int64_t count) {
    (void)row; (void)count;
    __builtin_trap();
}

void sam_scale_avx512(float *row, int64_t count, float factor) {
    (void)row; (void)count; (void)factor;
    __builtin_trap();
}

void sam_softmax_numerators_avx512(float *rows_base, int64_t rows, int64_t count, float *inverse_sums) {
    (void)rows_base; (void)rows; (void)count; (void)inverse_sums;
    __builtin_trap();
}

float sam_relative_softmax_numerators_avx512(float *row, const float *heights, const float *widths, int64_t grid_height,
                                             int64_t grid_width) {
    (void)row; (void)heights; (void)widths; (void)grid_height; (void)grid_width;
    __builtin_trap();
}

void sam_exponentiate_avx512(float *row, int64_t count, float shift, float sums[8]) {
    (void)row; (void)count; (void)shift; (void)sums;
    __builtin_trap();
}

void sam_gelu_tanh_avx512(float *values, int64_t count) {
    (void)values; (void)count;
    __builtin_trap();
}

#endif
