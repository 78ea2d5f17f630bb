// See include/vector_math.h. A linear layer's product without packing the activations: the
// weight, packed once per call into panels of 32 output features, stays in L1/L2 while twelve
// input rows are streamed past it, each element one fused multiply-add chain from its bias.
// OpenBLAS packs both operands on every call; for the encoders' tall, narrow products (65,536
// rows by 96 inputs in Hiera's first stage) that packing was ~11% of the encoder's time.
#include "vector_math.h"
#include "panel_blocks.h"

#include <string.h>

// Rows of the left operand whose stride is a multiple of 4 KB (ViT MLPs' second products read rows of
// 3072 to 5120 floats; every product of ViT-L reads rows of 1024) put a row block's twelve lines of one
// input in a single L1 set, more than Zen 4's eight ways hold: each pass then copies the block's slice into
// rows STAGED_STRIDE floats apart first (Zen 4, one core, 2048 x 3072 -> 768: 102 -> 111 GFLOP/s; 2048 x
// 1024 -> 768: 102 -> 111; strides of 1280, 1536 and 2560 floats lose nothing and are read in place). The
// Xeon's twelve ways hold the block: there the copy neither gained nor lost.
#define STAGED_STRIDE (SHORT_PASS + 16)

int64_t sam_panel_floats(int64_t n, int64_t k) { return (n + PANEL - 1) / PANEL * PANEL * k; }

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

// Eight rows of eight inputs, w(first + j, t0 + i) at source[j * feature_stride + i], into eight
// panel rows (t0 + i) of eight lanes from `lane`: a register transpose, so a linear weight's
// gather costs two loads and stores per eight floats instead of one per float (the pack was
// 1.4% of SAM 2.1 tiny's encoder samples, per call, as scalar gathers).
__attribute__((target("avx2"))) static inline void transpose8_into_panel(const float *source, int64_t feature_stride,
                                                                         float *panel_row, int64_t lane) {
    __m256 r0 = _mm256_loadu_ps(source), r1 = _mm256_loadu_ps(source + feature_stride);
    __m256 r2 = _mm256_loadu_ps(source + 2 * feature_stride), r3 = _mm256_loadu_ps(source + 3 * feature_stride);
    __m256 r4 = _mm256_loadu_ps(source + 4 * feature_stride), r5 = _mm256_loadu_ps(source + 5 * feature_stride);
    __m256 r6 = _mm256_loadu_ps(source + 6 * feature_stride), r7 = _mm256_loadu_ps(source + 7 * feature_stride);
    const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(panel_row + 0 * 32 + lane, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(panel_row + 1 * 32 + lane, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(panel_row + 2 * 32 + lane, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(panel_row + 3 * 32 + lane, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(panel_row + 4 * 32 + lane, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(panel_row + 5 * 32 + lane, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(panel_row + 6 * 32 + lane, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(panel_row + 7 * 32 + lane, _mm256_permute2f128_ps(u3, u7, 0x31));
}

// As sam_vector_math_has_avx512 asks: no cached flag, which packing workers would race on.
static int has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}
#else
static int has_avx2(void) { return 0; }
#endif

void sam_pack_panels(const float *w, int64_t n, int64_t k, int64_t feature_stride, int64_t input_stride,
                     int64_t first_panel, int64_t panel_count, float *panels) {
    const int registers = input_stride == 1 && feature_stride != 1 && has_avx2();
    for (int64_t p = first_panel; p < first_panel + panel_count; p++) {
        float *panel = panels + p * k * PANEL;
        const int64_t first = p * PANEL, lanes = n - first < PANEL ? n - first : PANEL;
        int64_t t = 0;
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
        // A whole panel of a weight whose inputs are adjacent: eight by eight through registers.
        if (registers && lanes == PANEL) {
            for (; t + 8 <= k; t += 8) {
                for (int64_t lane = 0; lane < PANEL; lane += 8) {
                    transpose8_into_panel(w + (first + lane) * feature_stride + t, feature_stride, panel + t * PANEL, lane);
                }
            }
        }
#endif
        // Row by row of the panel, so its stores are contiguous: a copy where features are
        // adjacent (attention's values), a gather from `lanes` rows otherwise (the rest).
        for (; t < k; t++) {
            float *row = panel + t * PANEL;
            const float *source = w + first * feature_stride + t * input_stride;
            if (feature_stride == 1) {
                memcpy(row, source, (size_t)lanes * sizeof(float));
            } else {
                for (int64_t j = 0; j < lanes; j++) row[j] = source[j * feature_stride];
            }
            for (int64_t j = lanes; j < PANEL; j++) row[j] = 0;
        }
    }
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))

#define SAM_AVX512 __attribute__((target("avx512f,fma")))

// The twelve rows' accumulators are spelled out: with arrays and loops clang kept some of them in
// memory, at half the speed.
#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define DECLARE(i) __m512 lo##i = bias_lo, hi##i = bias_hi;
#define ACCUMULATE(i) { const __m512 x = _mm512_set1_ps(a[i][t]); \
    lo##i = _mm512_fmadd_ps(x, w_lo, lo##i); hi##i = _mm512_fmadd_ps(x, w_hi, hi##i); }
// A later pass sums its inputs from zero, then adds what the passes before stored.
#define ADD_EARLIER(i) lo##i = _mm512_add_ps(_mm512_maskz_loadu_ps(mask_lo, out[i]), lo##i); \
    hi##i = _mm512_add_ps(_mm512_maskz_loadu_ps(mask_hi, out[i] + 16), hi##i);
#define SCALE(i) lo##i = _mm512_mul_ps(scale, lo##i); hi##i = _mm512_mul_ps(scale, hi##i);
#define STORE(i) _mm512_mask_storeu_ps(out[i], mask_lo, lo##i); _mm512_mask_storeu_ps(out[i] + 16, mask_hi, hi##i);
// The block's output lines, fetched for writing while the block computes: Hiera's first stage writes
// 65,536-row outputs that are in no cache, and each store would otherwise wait for its line (one
// core, 65,536 x 96 -> 384: 98 -> 103 GFLOP/s).
#define PREFETCH_OUT(i) __builtin_prefetch(out[i], 1, 3); __builtin_prefetch(out[i] + 16, 1, 3);

// The next row block's inputs, fetched while this block computes its first panel: a line of each of the
// twelve rows every sixteen inputs. The encoders' inputs come from memory (Hiera's first stage reads
// 65,536 rows of 384), and the hardware prefetcher keeps too few of the twelve streams ahead (one core,
// 65,536 x 384 -> 96: 118 -> 138 GFLOP/s; 16,384 x 768 -> 192: 137 -> 148).
#define PREFETCH_NEXT(i) __builtin_prefetch(next[i] + t, 0, 3);
#define LOAD_PANEL const __m512 w_lo = _mm512_load_ps(panel + t * PANEL), w_hi = _mm512_load_ps(panel + t * PANEL + 16);

// Twelve rows by one panel over inputs t_begin ..< t_end: out[i][j] = scale * (s + Σ_t a[i][t] * panel[t][j])
// for the lanes in the masks: the sum's chain starts from the bias, or, when `adds_earlier`, from zero
// and out[i][j] as an earlier pass left it is added after it; `scaled` is a constant at each call, so linear
// layers (scale 1) skip the 24 multiplies (2-3% on Hiera's 96-input products). `next`, when not null,
// holds the rows to prefetch.
SAM_AVX512 static inline void block12(const float *const a[12], const float *panel, int64_t t_begin, int64_t t_end,
                                      int adds_earlier, __m512 bias_lo, __m512 bias_hi, int scaled, __m512 scale,
                                      __mmask16 mask_lo, __mmask16 mask_hi, float *const out[12],
                                      const float *const *next) {
    PANEL_BLOCK_BODY(ROWS, DECLARE, PREFETCH_OUT, PREFETCH_NEXT, LOAD_PANEL, ACCUMULATE, ADD_EARLIER, SCALE, STORE)
}

// Six rows by two adjacent panels (64 outputs): the same sums as block12, chain by chain (each output's
// chain runs over t in order from the same start), with ten loads per 24 multiply-adds instead of block12's
// fourteen (and no spilled row pointers). Intel's cores run block12 well short of their two 512-bit FMA
// units with every operand in L1: Ice Lake (family 6, model 106), one core, a C harness of both loop
// shapes hot in L1: twelve rows by two vectors 123-133 GFLOP/s, six by four 138-164, fma-peak 167-177.
#define ROWS6(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define DECLARE6(i) __m512 c0##i = bias0, c1##i = bias1, c2##i = bias2, c3##i = bias3;
#define ACCUMULATE6(i) { const __m512 x = _mm512_set1_ps(a[i][t]); \
    c0##i = _mm512_fmadd_ps(x, w0, c0##i); c1##i = _mm512_fmadd_ps(x, w1, c1##i); \
    c2##i = _mm512_fmadd_ps(x, w2, c2##i); c3##i = _mm512_fmadd_ps(x, w3, c3##i); }
#define ADD_EARLIER6(i) c0##i = _mm512_add_ps(_mm512_loadu_ps(out[i]), c0##i); \
    c1##i = _mm512_add_ps(_mm512_loadu_ps(out[i] + 16), c1##i); \
    c2##i = _mm512_add_ps(_mm512_maskz_loadu_ps(mask_lo, out[i] + PANEL), c2##i); \
    c3##i = _mm512_add_ps(_mm512_maskz_loadu_ps(mask_hi, out[i] + PANEL + 16), c3##i);
#define SCALE6(i) c0##i = _mm512_mul_ps(scale, c0##i); c1##i = _mm512_mul_ps(scale, c1##i); \
    c2##i = _mm512_mul_ps(scale, c2##i); c3##i = _mm512_mul_ps(scale, c3##i);
#define STORE6(i) _mm512_storeu_ps(out[i], c0##i); _mm512_storeu_ps(out[i] + 16, c1##i); \
    _mm512_mask_storeu_ps(out[i] + PANEL, mask_lo, c2##i); _mm512_mask_storeu_ps(out[i] + PANEL + 16, mask_hi, c3##i);
#define PREFETCH_OUT6(i) PREFETCH_OUT(i) __builtin_prefetch(out[i] + PANEL, 1, 3); __builtin_prefetch(out[i] + PANEL + 16, 1, 3);
#define LOAD_PANELS6 const __m512 w0 = _mm512_load_ps(panel + t * PANEL), w1 = _mm512_load_ps(panel + t * PANEL + 16); \
    const __m512 w2 = _mm512_load_ps(panel + panel_floats + t * PANEL), w3 = _mm512_load_ps(panel + panel_floats + t * PANEL + 16);

// Six rows by the panel at `panel` (all 32 lanes outputs) and the one panel_floats after it (its lanes in
// the masks), outputs out[i] ..< out[i] + 64; otherwise as block12. `next`, when not null, holds six rows
// to prefetch.
SAM_AVX512 static inline void block6(const float *const a[6], const float *panel, int64_t panel_floats, int64_t t_begin,
                                     int64_t t_end, int adds_earlier, __m512 bias0, __m512 bias1, __m512 bias2, __m512 bias3,
                                     int scaled, __m512 scale, __mmask16 mask_lo, __mmask16 mask_hi, float *const out[6],
                                     const float *const *next) {
    PANEL_BLOCK_BODY(ROWS6, DECLARE6, PREFETCH_OUT6, PREFETCH_NEXT, LOAD_PANELS6, ACCUMULATE6, ADD_EARLIER6, SCALE6, STORE6)
}

// The masks of panel p's lanes that are outputs (n outputs in all).
static inline void panel_masks(int64_t n, int64_t p, __mmask16 *mask_lo, __mmask16 *mask_hi) {
    const int64_t first = p * PANEL, lanes = n - first < PANEL ? n - first : PANEL;
    *mask_lo = lanes >= 16 ? 0xFFFF : (__mmask16)((1u << lanes) - 1);
    *mask_hi = lanes <= 16 ? 0 : lanes == 32 ? 0xFFFF : (__mmask16)((1u << (lanes - 16)) - 1);
}

// Whether this CPU runs block6 over pairs of panels: Intel's cores (see block6). AMD's keep block12, which
// runs at 94-96% of a Zen 5 core's ceiling on the encoders' shapes; block6 has not been timed there.
// As sam_vector_math_has_avx512: no cached flag.
static int prefers_six_rows(void) {
    __builtin_cpu_init();
    return __builtin_cpu_is("intel");
}

// One pass of the product over inputs t0 ..< t1 of every panel: the first pass's sums start from the
// bias; a later pass's start from zero and are added to what `out` holds; the last pass applies the scale.
SAM_AVX512 static void product_pass(const float *a, int64_t a_stride, int64_t rows, int64_t k, int64_t t0, int64_t t1,
                                    const float *panels, int64_t n, int64_t first_panel, int64_t panel_count,
                                    float scale, const float *bias, float *out, int64_t out_stride, int six_rows) {
    const __m512 scales = _mm512_set1_ps(scale);
    const int64_t panel_floats = k * PANEL, pass_floats = (t1 - t0 > 0 ? t1 - t0 : 1) * PANEL;
    const int adds_earlier = t0 > 0, scaled = t1 >= k && scale != 1.0f;
    int64_t group = GROUP_FLOATS / pass_floats;
    if (group < 1) group = 1;
    // The staged slice, when the rows alias: input t of row i at staged[i * STAGED_STRIDE + t - t0].
    const int staging = (a_stride * (int64_t)sizeof(float)) % 4096 == 0 && t1 > t0;
    float staged[staging ? 12 * STAGED_STRIDE : 1] __attribute__((aligned(64)));
    for (int64_t g = first_panel; g < first_panel + panel_count; g += group) {
        const int64_t group_end = g + group < first_panel + panel_count ? g + group : first_panel + panel_count;
        for (int64_t r = 0; r < rows; r += 12) {
            const float *rows_a[12], *next_a[12];
            float *rows_out[12];
            panel_block_rows(a, a_stride, out, out_stride, rows, r, 12, rows_a, next_a, rows_out);
            const float *panel_start = panels;
            int64_t block_begin = t0, block_end = t1;
            if (staging) {
                for (int i = 0; i < 12; i++) {
                    memcpy(staged + i * STAGED_STRIDE, rows_a[i] + t0, (size_t)(t1 - t0) * sizeof(float));
                    rows_a[i] = staged + i * STAGED_STRIDE;
                    next_a[i] += t0;  // block12 prefetches next[i] + t for its local t
                }
                panel_start = panels + t0 * PANEL;
                block_begin = 0;
                block_end = t1 - t0;
            }
            for (int64_t p = g; p < group_end; p++) {
                const int seeded = bias && !adds_earlier;  // the bias starts the first pass's sums only
                const float *panel = panel_start + p * panel_floats;
                __mmask16 mask_lo, mask_hi;
                if (six_rows && p + 1 < group_end) {
                    // Panels p and p + 1, six rows at a time; p's 32 lanes are all outputs.
                    const int64_t first = p * PANEL;
                    panel_masks(n, p + 1, &mask_lo, &mask_hi);
                    const __m512 b0 = seeded ? _mm512_loadu_ps(bias + first) : _mm512_setzero_ps();
                    const __m512 b1 = seeded ? _mm512_loadu_ps(bias + first + 16) : _mm512_setzero_ps();
                    const __m512 b2 = seeded ? _mm512_maskz_loadu_ps(mask_lo, bias + first + PANEL) : _mm512_setzero_ps();
                    const __m512 b3 = seeded ? _mm512_maskz_loadu_ps(mask_hi, bias + first + PANEL + 16) : _mm512_setzero_ps();
                    float *block_out[12];
                    for (int i = 0; i < 12; i++) block_out[i] = rows_out[i] + first;
                    // The second half is skipped when all its rows are past the end: repeating the last row
                    // there would add an earlier pass's sums to it twice.
                    for (int half = 0; half < (r + 6 < rows ? 2 : 1); half++) {
                        const float *const *prefetch = p == g ? next_a + 6 * half : 0;
                        if (scaled) {
                            block6(rows_a + 6 * half, panel, panel_floats, block_begin, block_end, adds_earlier, b0, b1, b2, b3, 1,
                                   scales, mask_lo, mask_hi, block_out + 6 * half, prefetch);
                        } else {
                            block6(rows_a + 6 * half, panel, panel_floats, block_begin, block_end, adds_earlier, b0, b1, b2, b3, 0,
                                   scales, mask_lo, mask_hi, block_out + 6 * half, prefetch);
                        }
                    }
                    p++;
                    continue;
                }
                const int64_t first = p * PANEL;
                panel_masks(n, p, &mask_lo, &mask_hi);
                const __m512 bias_lo = seeded ? _mm512_maskz_loadu_ps(mask_lo, bias + first) : _mm512_setzero_ps();
                const __m512 bias_hi = seeded ? _mm512_maskz_loadu_ps(mask_hi, bias + first + 16) : _mm512_setzero_ps();
                float *block_out[12];
                for (int i = 0; i < 12; i++) block_out[i] = rows_out[i] + first;
                const float *const *prefetch = p == g ? next_a : 0;
                if (scaled) {
                    block12(rows_a, panel, block_begin, block_end, adds_earlier, bias_lo, bias_hi, 1, scales, mask_lo, mask_hi, block_out, prefetch);
                } else {
                    block12(rows_a, panel, block_begin, block_end, adds_earlier, bias_lo, bias_hi, 0, scales, mask_lo, mask_hi, block_out, prefetch);
                }
            }
        }
    }
}

SAM_AVX512 void sam_panel_product_blocks_avx512(const float *a, int64_t a_stride, int64_t rows, int64_t k,
                                                const float *panels, int64_t n, int64_t first_panel, int64_t panel_count,
                                                float scale, const float *bias, float *out, int64_t out_stride, int six_rows) {
    const int64_t pass = k > LONG_INPUTS ? SHORT_PASS : k;
    int64_t t0 = 0;
    do {  // once when k is 0: the bias alone, scaled
        const int64_t t1 = k - t0 > pass ? t0 + pass : k;
        product_pass(a, a_stride, rows, k, t0, t1, panels, n, first_panel, panel_count, scale, bias, out, out_stride, six_rows);
        t0 = t1;
    } while (t0 < k);
}

SAM_AVX512 void sam_panel_product_avx512(const float *a, int64_t a_stride, int64_t rows, int64_t k,
                                         const float *panels, int64_t n, int64_t first_panel, int64_t panel_count,
                                         float scale, const float *bias, float *out, int64_t out_stride) {
    sam_panel_product_blocks_avx512(a, a_stride, rows, k, panels, n, first_panel, panel_count, scale, bias, out, out_stride,
                                    prefers_six_rows());
}

#else

void sam_panel_product_blocks_avx512(const float *a, int64_t a_stride, int64_t rows, int64_t k,
                                     const float *panels, int64_t n, int64_t first_panel, int64_t panel_count,
                                     float scale, const float *bias, float *out, int64_t out_stride, int six_rows) {
    (void)scale; (void)a; (void)a_stride; (void)rows; (void)k; (void)panels; (void)n; (void)first_panel; (void)panel_count;
    (void)bias; (void)out; (void)out_stride; (void)six_rows;
    __builtin_trap();
}

void sam_panel_product_avx512(const float *a, int64_t a_stride, int64_t rows, int64_t k,
                              const float *panels, int64_t n, int64_t first_panel, int64_t panel_count,
                              float scale, const float *bias, float *out, int64_t out_stride) {
    sam_panel_product_blocks_avx512(a, a_stride, rows, k, panels, n, first_panel, panel_count, scale, bias, out, out_stride, 0);
}

#endif
