// See include/vector_math.h. ref: Sources/SAMKernels/VectorMath.swift Kernels.exp8, the
// operation order this file keeps.
#include "vector_math.h"
#include "cpu_features.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

int sam_vector_math_has_avx512(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && sam_cpu_cap() >= SAM_CPU_CAP_AVX512;
}

#include "wide_vectors.h"

// The largest of the sixteen lanes, compared one by one (-inf lanes stand for none).
SAM_AVX512 static inline float largest_lane(__m512 maxima) {
    float lanes[16], largest = -__builtin_inff();
    _mm512_storeu_ps(lanes, maxima);
    for (int lane = 0; lane < 16; lane++) largest = lanes[lane] > largest ? lanes[lane] : largest;
    return largest;
}

// The largest lane of four chains of lane maxima.
SAM_AVX512 static inline float largest_of_chains(__m512 m0, __m512 m1, __m512 m2, __m512 m3) {
    return largest_lane(pointwise_max(pointwise_max(m0, m1), pointwise_max(m2, m3)));
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
    // The largest value whatever the order of comparisons: lane maxima in four independent chains (one
    // chain waits a compare and a blend per sixteen floats), then across chains and lanes.
    const __m512 none = _mm512_set1_ps(-__builtin_inff());
    __m512 m0 = none, m1 = none, m2 = none, m3 = none;
    int64_t j = 0;
    for (; j + 64 <= count; j += 64) {
        m0 = pointwise_max(m0, _mm512_loadu_ps(row + j));
        m1 = pointwise_max(m1, _mm512_loadu_ps(row + j + 16));
        m2 = pointwise_max(m2, _mm512_loadu_ps(row + j + 32));
        m3 = pointwise_max(m3, _mm512_loadu_ps(row + j + 48));
    }
    for (; j + 16 <= count; j += 16) m0 = pointwise_max(m0, _mm512_loadu_ps(row + j));
    if (j < count) m0 = pointwise_max(m0, _mm512_mask_loadu_ps(none, 0x00FF, row + j));
    return largest_of_chains(m0, m1, m2, m3);
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
    // Pass 1: the largest score with its relative positions (masked-off lanes read as 0 and are not
    // compared), in four chains of lane maxima, one per sixteen columns of four, so that one chain
    // does not wait for a compare and a blend per sixteen scores.
    const __m512 none = _mm512_set1_ps(-__builtin_inff());
    __m512 m0 = none, m1 = none, m2 = none, m3 = none;
    for (int64_t key_row = 0; key_row < grid_height; key_row++) {
        const float *segment = row + key_row * grid_width;
        const __m512 height = _mm512_set1_ps(heights[key_row]);
        int64_t column = 0;
        for (; column + 64 <= grid_width; column += 64) {
            m0 = pointwise_max(m0, with_relative_positions(segment, height, widths, column, 0xFFFF));
            m1 = pointwise_max(m1, with_relative_positions(segment, height, widths, column + 16, 0xFFFF));
            m2 = pointwise_max(m2, with_relative_positions(segment, height, widths, column + 32, 0xFFFF));
            m3 = pointwise_max(m3, with_relative_positions(segment, height, widths, column + 48, 0xFFFF));
        }
        for (; column < grid_width; column += 16) {
            const __mmask16 mask = grid_width - column >= 16 ? 0xFFFF : (__mmask16)((1u << (grid_width - column)) - 1);
            const __m512 x = with_relative_positions(segment, height, widths, column, mask);
            m0 = _mm512_mask_blend_ps(_mm512_mask_cmp_ps_mask(mask, x, m0, _CMP_GT_OQ), m0, x);
        }
    }
    const float largest = largest_of_chains(m0, m1, m2, m3);
    // Pass 2: the same sums again, exponentiated and stored, and their total.
    const __m512 shift = _mm512_set1_ps(largest);
    __m512 sums = _mm512_setzero_ps();
    for (int64_t key_row = 0; key_row < grid_height; key_row++) {
        float *segment = row + key_row * grid_width;
        const __m512 height = _mm512_set1_ps(heights[key_row]);
        int64_t column = 0;
        // Whole vectors stored whole: a masked store costs several times as much on Zen 5 (ViT-B's
        // global attention, 64-key rows, spent a third of this function's time on them).
        for (; column + 16 <= grid_width; column += 16) {
            const __m512 e = exp16(_mm512_sub_ps(with_relative_positions(segment, height, widths, column, 0xFFFF), shift));
            _mm512_storeu_ps(segment + column, e);
            sums = _mm512_add_ps(sums, e);
        }
        if (column < grid_width) {
            const __mmask16 mask = (__mmask16)((1u << (grid_width - column)) - 1);
            const __m512 e = exp16(_mm512_sub_ps(with_relative_positions(segment, height, widths, column, mask), shift));
            _mm512_mask_storeu_ps(segment + column, mask, e);
            sums = _mm512_mask_add_ps(sums, mask, sums, e);
        }
    }
    return 1.0f / _mm512_reduce_add_ps(sums);
}

SAM_AVX512 float sam_relative_softmax_numerators_narrow_avx512(float *row, const float *heights, const float *widths,
                                                               int64_t grid_height, int64_t grid_width, float *scratch) {
    const int64_t count = grid_height * grid_width;
    const __mmask16 key_row_mask = (__mmask16)((1u << grid_width) - 1);
    // Whole stores: each key row's sixteen lanes run past it into the next, which its own store
    // then overwrites; the last one's spill lands in the scratch's sixteen spare floats.
    for (int64_t key_row = 0; key_row < grid_height; key_row++) {
        const __m512 height = _mm512_set1_ps(heights[key_row]);
        _mm512_storeu_ps(scratch + key_row * grid_width,
                         with_relative_positions(row + key_row * grid_width, height, widths, 0, key_row_mask));
    }
    const __m512 none = _mm512_set1_ps(-__builtin_inff());
    const int64_t whole = count & ~(int64_t)15;
    const __mmask16 tail = (__mmask16)((1u << (count - whole)) - 1);
    __m512 m0 = none, m1 = none;
    int64_t j = 0;
    for (; j + 32 <= whole; j += 32) {
        m0 = pointwise_max(m0, _mm512_loadu_ps(scratch + j));
        m1 = pointwise_max(m1, _mm512_loadu_ps(scratch + j + 16));
    }
    if (j < whole) m0 = pointwise_max(m0, _mm512_loadu_ps(scratch + j));
    if (tail) m1 = pointwise_max(m1, _mm512_mask_loadu_ps(none, tail, scratch + whole));
    const __m512 shift = _mm512_set1_ps(largest_lane(pointwise_max(m0, m1)));
    __m512 sums = _mm512_setzero_ps();
    for (j = 0; j < whole; j += 16) {
        const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(scratch + j), shift));
        _mm512_storeu_ps(row + j, e);
        sums = _mm512_add_ps(sums, e);
    }
    if (tail) {
        const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, scratch + whole), shift));
        _mm512_mask_storeu_ps(row + whole, tail, e);
        sums = _mm512_mask_add_ps(sums, tail, sums, e);
    }
    return 1.0f / _mm512_reduce_add_ps(sums);
}

SAM_AVX512 void sam_scale_avx512(float *row, int64_t count, float factor) {
    const __m512 scale = _mm512_set1_ps(factor);
    int64_t j = 0;
    for (; j + 16 <= count; j += 16) _mm512_storeu_ps(row + j, _mm512_mul_ps(_mm512_loadu_ps(row + j), scale));
    if (j < count) _mm512_mask_storeu_ps(row + j, 0x00FF, _mm512_mul_ps(_mm512_maskz_loadu_ps(0x00FF, row + j), scale));
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

float sam_relative_softmax_numerators_narrow_avx512(float *row, const float *heights, const float *widths,
                                                    int64_t grid_height, int64_t grid_width, float *scratch) {
    (void)row; (void)heights; (void)widths; (void)grid_height; (void)grid_width; (void)scratch;
    __builtin_trap();
}

void sam_exponentiate_avx512(float *row, int64_t count, float shift, float sums[8]) {
    (void)row; (void)count; (void)shift; (void)sums;
    __builtin_trap();
}

#endif
