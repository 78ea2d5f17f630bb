// See include/vector_math.h. ref: Sources/SAMKernels/MaskHead.swift Kernels.maskHead, whose last
// steps this fuses: the scatter of the second transposed convolution's taps with its bias, the GELU
// (gelu16, as sam_gelu_avx512), and the hypernetwork product, for sixteen output pixels at a time.
#include "vector_math.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>
#include "wide_vectors.h"

SAM_AVX512 void sam_mask_head_tail_avx512(const float *products, int64_t middle_rows, int64_t middle_width,
                                          int64_t channels, const float *bias, const float *hypernetwork, int64_t masks,
                                          float *out, int64_t out_stride, int64_t mask_stride) {
    const int64_t out_width = 2 * middle_width;
    for (int64_t oy = 0; oy < 2 * middle_rows; oy++) {
        const int64_t my = oy / 2, i = oy % 2;
        for (int64_t ox = 0; ox < out_width; ox += 16) {
            // Output pixel (oy, ox + k) is tap (i, k % 2) of middle pixel (my, ox / 2 + k / 2); a
            // middle pixel's taps (i, 0) and (i, 1) lie side by side.
            const float *taps = products + ((my * middle_width + ox / 2) * 4 + 2 * i) * channels;
            __m512 sums[SAM_MASK_HEAD_MAX_MASKS];
            for (int64_t m = 0; m < masks; m++) sums[m] = _mm512_setzero_ps();
            for (int64_t c0 = 0; c0 < channels; c0 += 16) {
                const __m512 bias16 = _mm512_loadu_ps(bias + c0);
                __m512 u[16];
                for (int k = 0; k < 16; k++) {
                    const float *tap = taps + ((int64_t)(k / 2) * 4 + k % 2) * channels + c0;
                    u[k] = gelu16(_mm512_add_ps(_mm512_loadu_ps(tap), bias16));
                }
                transpose16(u);  // u[c]: channel c0 + c of the sixteen pixels
                for (int64_t m = 0; m < masks; m++) {
                    const float *row = hypernetwork + m * channels + c0;
                    for (int c = 0; c < 16; c++) sums[m] = _mm512_fmadd_ps(_mm512_set1_ps(row[c]), u[c], sums[m]);
                }
            }
            for (int64_t m = 0; m < masks; m++) _mm512_storeu_ps(out + m * mask_stride + oy * out_stride + ox, sums[m]);
        }
    }
}

#else

void sam_mask_head_tail_avx512(const float *products, int64_t middle_rows, int64_t middle_width, int64_t channels,
                               const float *bias, const float *hypernetwork, int64_t masks, float *out, int64_t out_stride,
                               int64_t mask_stride) {
    (void)products; (void)middle_rows; (void)middle_width; (void)channels; (void)bias; (void)hypernetwork;
    (void)masks; (void)out; (void)out_stride; (void)mask_stride;
    __builtin_trap();
}

#endif
