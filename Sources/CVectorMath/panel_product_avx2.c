// See include/vector_math.h. The panel product (panel_product.c) for CPUs with AVX2 and FMA but not
// AVX-512: the same packed panels of 32 output features, the same passes of 512 inputs and the same
// chain per output (from the bias, t in order), so its bits are the AVX-512 product's; only the register
// block differs. Sixteen ymm registers hold six rows by half a panel (sixteen lanes): twelve
// accumulators, two weight vectors and the broadcast input, eight loads per twelve multiply-adds.
#include "vector_math.h"
#include "panel_blocks.h"

#define HALF 16

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#define SAM_AVX2 __attribute__((target("avx2,fma")))

int sam_vector_math_has_avx2_fma(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

// Spelled out, as block12 in panel_product.c, so the accumulators stay in registers.
#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define DECLARE(i) __m256 lo##i = bias_lo, hi##i = bias_hi;
#define ACCUMULATE(i) { const __m256 x = _mm256_broadcast_ss(a[i] + t); \
    lo##i = _mm256_fmadd_ps(x, w_lo, lo##i); hi##i = _mm256_fmadd_ps(x, w_hi, hi##i); }
#define LOAD_WEIGHTS const __m256 w_lo = _mm256_load_ps(panel + t * PANEL), w_hi = _mm256_load_ps(panel + t * PANEL + 8);
// Half panels whose sixteen lanes are all outputs load and store whole vectors; the last panel's masked.
#define ADD_EARLIER(i) if (whole) { lo##i = _mm256_add_ps(_mm256_loadu_ps(out[i]), lo##i); \
        hi##i = _mm256_add_ps(_mm256_loadu_ps(out[i] + 8), hi##i); } \
    else { lo##i = _mm256_add_ps(_mm256_maskload_ps(out[i], mask_lo), lo##i); \
        hi##i = _mm256_add_ps(_mm256_maskload_ps(out[i] + 8, mask_hi), hi##i); }
#define SCALE(i) lo##i = _mm256_mul_ps(scale, lo##i); hi##i = _mm256_mul_ps(scale, hi##i);
#define STORE(i) if (whole) { _mm256_storeu_ps(out[i], lo##i); _mm256_storeu_ps(out[i] + 8, hi##i); } \
    else { _mm256_maskstore_ps(out[i], mask_lo, lo##i); _mm256_maskstore_ps(out[i] + 8, mask_hi, hi##i); }
// As panel_product.c: the block's output lines fetched for writing, the next block's rows fetched a line
// of each every sixteen inputs.
#define PREFETCH_OUT(i) __builtin_prefetch(out[i], 1, 3);
#define PREFETCH_NEXT(i) __builtin_prefetch(next[i] + t, 0, 3);

// Six rows by the sixteen lanes at `panel` (a panel row is PANEL floats) over inputs t_begin ..< t_end:
// out[i][j] = scale * (s + Σ_t a[i][t] * panel[t][j]), the chain from the bias, or, when `adds_earlier`,
// from zero with out[i][j] as an earlier pass left it added after; `whole` when all sixteen lanes are
// outputs, else the lanes in the masks. `next`, when not null, holds the six rows to prefetch.
SAM_AVX2 static inline void block6(const float *const a[6], const float *panel, int64_t t_begin, int64_t t_end,
                                   int adds_earlier, __m256 bias_lo, __m256 bias_hi, int scaled, __m256 scale, int whole,
                                   __m256i mask_lo, __m256i mask_hi, float *const out[6], const float *const *next) {
    PANEL_BLOCK_BODY(ROWS, DECLARE, PREFETCH_OUT, PREFETCH_NEXT, LOAD_WEIGHTS, ACCUMULATE, ADD_EARLIER, SCALE, STORE)
}

// The lanes 0 ..< lanes of eight (0 to 8) as a maskload/maskstore mask.
SAM_AVX2 static inline __m256i lane_mask(int64_t lanes) {
    const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)lanes), index);
}

// One pass over inputs t0 ..< t1, as product_pass in panel_product.c: rows six at a time, each block
// crossing every half panel of a group before the next block comes.
SAM_AVX2 static void product_pass(const float *a, int64_t a_stride, int64_t rows, int64_t k, int64_t t0, int64_t t1,
                                  const float *panels, int64_t n, int64_t first_panel, int64_t panel_count, float scale,
                                  const float *bias, float *out, int64_t out_stride) {
    const __m256 scales = _mm256_set1_ps(scale);
    const int64_t panel_floats = k * PANEL, pass_floats = (t1 - t0 > 0 ? t1 - t0 : 1) * PANEL;
    const int adds_earlier = t0 > 0, scaled = t1 >= k && scale != 1.0f;
    const int seeded = bias && !adds_earlier;  // the bias starts the first pass's sums only
    int64_t group = GROUP_FLOATS / pass_floats;
    if (group < 1) group = 1;
    for (int64_t g = first_panel; g < first_panel + panel_count; g += group) {
        const int64_t group_end = g + group < first_panel + panel_count ? g + group : first_panel + panel_count;
        for (int64_t r = 0; r < rows; r += 6) {
            // A block loads every earlier sum before it stores, so repeated rows store the same values.
            const float *rows_a[6], *next_a[6];
            float *rows_out[6];
            panel_block_rows(a, a_stride, out, out_stride, rows, r, 6, rows_a, next_a, rows_out);
            for (int64_t p = g; p < group_end; p++) {
                for (int64_t half = 0; half < 2; half++) {
                    const int64_t first = p * PANEL + half * HALF, lanes = n - first < HALF ? n - first : HALF;
                    if (lanes <= 0) break;  // the last panel's high half holds no output
                    const int whole = lanes == HALF;
                    const __m256i mask_lo = lane_mask(lanes < 8 ? lanes : 8), mask_hi = lane_mask(lanes > 8 ? lanes - 8 : 0);
                    const __m256 bias_lo = !seeded ? _mm256_setzero_ps()
                        : whole ? _mm256_loadu_ps(bias + first) : _mm256_maskload_ps(bias + first, mask_lo);
                    const __m256 bias_hi = !seeded ? _mm256_setzero_ps()
                        : whole ? _mm256_loadu_ps(bias + first + 8) : _mm256_maskload_ps(bias + first + 8, mask_hi);
                    float *block_out[6];
                    for (int i = 0; i < 6; i++) block_out[i] = rows_out[i] + first;
                    const float *panel = panels + p * panel_floats + half * HALF;
                    const float *const *prefetch = p == g && half == 0 ? next_a : 0;
                    if (scaled) {
                        block6(rows_a, panel, t0, t1, adds_earlier, bias_lo, bias_hi, 1, scales, whole, mask_lo, mask_hi,
                               block_out, prefetch);
                    } else {
                        block6(rows_a, panel, t0, t1, adds_earlier, bias_lo, bias_hi, 0, scales, whole, mask_lo, mask_hi,
                               block_out, prefetch);
                    }
                }
            }
        }
    }
}

SAM_AVX2 void sam_panel_product_avx2(const float *a, int64_t a_stride, int64_t rows, int64_t k, const float *panels,
                                     int64_t n, int64_t first_panel, int64_t panel_count, float scale, const float *bias,
                                     float *out, int64_t out_stride) {
    const int64_t pass = k > LONG_INPUTS ? SHORT_PASS : k;
    int64_t t0 = 0;
    do {  // once when k is 0: the bias alone, scaled
        const int64_t t1 = k - t0 > pass ? t0 + pass : k;
        product_pass(a, a_stride, rows, k, t0, t1, panels, n, first_panel, panel_count, scale, bias, out, out_stride);
        t0 = t1;
    } while (t0 < k);
}

#else

int sam_vector_math_has_avx2_fma(void) { return 0; }

void sam_panel_product_avx2(const float *a, int64_t a_stride, int64_t rows, int64_t k, const float *panels, int64_t n,
                            int64_t first_panel, int64_t panel_count, float scale, const float *bias, float *out,
                            int64_t out_stride) {
    (void)a; (void)a_stride; (void)rows; (void)k; (void)panels; (void)n; (void)first_panel; (void)panel_count;
    (void)scale; (void)bias; (void)out; (void)out_stride;
    __builtin_trap();
}

#endif
