// See include/bf16_linear.h. A register-blocked product in the usual GEMM shape: 6 rows by 32
// output features in twelve accumulators; per input pair, two panel loads, six broadcasts of an
// input pair and twelve vdpbf16ps. Blocks of inputs (KC pairs: a 32 KB panel slice, L1) and of
// rows (MC: their rounded inputs, L2) keep the operands in cache. Where the CPU has AMX-BF16 and the
// OS grants the tile state, whole blocks of 32 rows run on tiles instead (tdpbf16ps), the rest as
// above.
#include "bf16_linear.h"

#include "cpu_features.h"
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { PANEL = 32, ROWS = 6, KC = 256, MC = 128 };

static int64_t pairs_of(int64_t k) { return (k + 1) / 2; }
// Panels and rounded rows hold whole tiles of sixteen pairs (zeros past the last input): one AMX
// tile row.
static int64_t padded_pairs(int64_t k) { return (pairs_of(k) + 15) / 16 * 16; }

int64_t sam_bf16_panel_count(int64_t n, int64_t k) { return (n + PANEL - 1) / PANEL * PANEL * padded_pairs(k); }

int64_t sam_bf16_scratch_count(int64_t k) { return MC * padded_pairs(k); }

int64_t sam_bf16_scratch_count_rows(int64_t k, int64_t rows) { return (rows < MC ? rows : MC) * padded_pairs(k); }

static _Atomic int limit = -1;

void sam_bf16_limit_implementation(int level) { limit = level; }

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#define SAM_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

int sam_bf16_supported(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bf16") && sam_cpu_cap() >= SAM_CPU_CAP_AVX512;
}

int sam_bf16_implementation(void) {
    const int level = !sam_bf16_supported() ? 0 : sam_amx_usable(SAM_AMX_BF16) ? 2 : 1;
    return limit >= 0 && limit < level ? limit : level;
}

// One row of k floats as bf16, padded with a zero to an even count: pairs_of(k) uint32.
SAM_BF16 static void round_row(const float *x, int64_t k, uint32_t *out) {
    uint16_t *halves = (uint16_t *)out;
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) _mm256_storeu_si256((__m256i *)(halves + i), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(x + i)));
    if (i < k) {
        const __mmask16 lanes = (__mmask16)((1u << (k - i)) - 1);
        const __m256i tail = (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(lanes, x + i));
        _mm256_mask_storeu_epi16(halves + i, lanes, tail);
    }
    if (k % 2) halves[k] = 0;
}

SAM_BF16 void sam_bf16_pack_weights(const float *w, int64_t n, int64_t k, uint32_t *panels) {
    sam_bf16_pack_strided(w, n, k, k, 1, panels);
}

// Rows are rounded one feature at a time. A weight whose inputs are not adjacent (attention's values,
// packed by value channel with the keys as inputs) has its group of 32 features gathered first, in one
// pass over the source: one feature at a time would read the whole source once per feature.
SAM_BF16 void sam_bf16_pack_strided(const float *w, int64_t n, int64_t k, int64_t feature_stride, int64_t input_stride,
                                    uint32_t *panels) {
    const int64_t kp = pairs_of(k), padded = padded_pairs(k), groups = (n + PANEL - 1) / PANEL;
    uint32_t *row = malloc((size_t)(kp > 0 ? kp : 1) * sizeof(uint32_t));
    float *gathered = input_stride == 1 ? NULL : malloc((size_t)(k > 0 ? k : 1) * PANEL * sizeof(float));
    if (!row || (input_stride != 1 && !gathered)) __builtin_trap();  // as Swift's allocations do
    for (int64_t g = 0; g < groups; g++) {
        uint32_t *panel = panels + g * padded * PANEL;
        const int64_t first = g * PANEL, lanes = n - first < PANEL ? n - first : PANEL;
        if (gathered) {
            for (int64_t i = 0; i < k; i++) {
                const float *source = w + first * feature_stride + i * input_stride;
                for (int64_t c = 0; c < lanes; c++) gathered[c * k + i] = source[c * feature_stride];
            }
        }
        for (int64_t c = 0; c < PANEL; c++) {
            if (c < lanes) round_row(gathered ? gathered + c * k : w + (first + c) * feature_stride, k, row);
            for (int64_t p = 0; p < kp; p++) panel[p * PANEL + c] = c < lanes ? row[p] : 0;
        }
        memset(panel + kp * PANEL, 0, (size_t)((padded - kp) * PANEL) * sizeof(uint32_t));
    }
    free(gathered);
    free(row);
}

// c rows [0, mr) x features [0, 32) masked by m0, m1 += a rows x panel over `depth` pairs.
// Rows past mr repeat row mr - 1 and are not stored.
SAM_BF16 static inline void tile(const uint32_t *a, int64_t lda, int mr, const uint32_t *panel, int64_t depth,
                                 float *c, int64_t ldc, __mmask16 m0, __mmask16 m1) {
    const uint32_t *rows[ROWS];
    for (int i = 0; i < ROWS; i++) rows[i] = a + (i < mr ? i : mr - 1) * lda;
    __m512 s0[ROWS], s1[ROWS];
    // The tile's output lines, fetched for writing while it computes: a linear layer's output is in no
    // cache, and the sums' load-add-store at the end would wait for each line (one core, best of three
    // alternating runs: 4096 x 256 -> 2048, 150 -> 191 GFLOP/s; 4096 x 384 -> 1536, 176 -> 210).
    for (int i = 0; i < mr; i++) {
        __builtin_prefetch(c + i * ldc, 1, 3);
        __builtin_prefetch(c + i * ldc + 16, 1, 3);
    }
    for (int i = 0; i < ROWS; i++) s0[i] = s1[i] = _mm512_setzero_ps();
    for (int64_t p = 0; p < depth; p++) {
        const __m512bh b0 = (__m512bh)_mm512_loadu_si512(panel + p * PANEL);
        const __m512bh b1 = (__m512bh)_mm512_loadu_si512(panel + p * PANEL + 16);
        for (int i = 0; i < ROWS; i++) {
            const __m512bh x = (__m512bh)_mm512_set1_epi32((int)rows[i][p]);
            s0[i] = _mm512_dpbf16_ps(s0[i], x, b0);
            s1[i] = _mm512_dpbf16_ps(s1[i], x, b1);
        }
    }
    for (int i = 0; i < mr; i++) {
        float *out = c + i * ldc;
        _mm512_mask_storeu_ps(out, m0, _mm512_add_ps(_mm512_maskz_loadu_ps(m0, out), s0[i]));
        _mm512_mask_storeu_ps(out + 16, m1, _mm512_add_ps(_mm512_maskz_loadu_ps(m1, out + 16), s1[i]));
    }
}

// AMX: 32 rows (two tiles of sixteen rounded rows, sixteen pairs each) by 32 features (two tiles of
// the panel's sixteen pairs for sixteen features: the panel read with a 128-byte stride), summed
// from zero over `depth` pairs by tdpbf16ps and added onto c as tile() adds its sums.
#define AMX_BF16 __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512bf16")))

AMX_BF16 static void block_amx(const uint32_t *a, int64_t lda, const uint32_t *panel, int64_t depth,
                               float *c, int64_t ldc, __mmask16 m0, __mmask16 m1) {
    float sums[32 * 32] __attribute__((aligned(64)));
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    for (int64_t p = 0; p < depth; p += 16) {
        _tile_loadd(4, a + p, lda * 4);
        _tile_loadd(5, a + 16 * lda + p, lda * 4);
        _tile_loadd(6, panel + p * PANEL, PANEL * 4);
        _tile_loadd(7, panel + p * PANEL + 16, PANEL * 4);
        _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, sums, 32 * 4); _tile_stored(1, sums + 16, 32 * 4);
    _tile_stored(2, sums + 16 * 32, 32 * 4); _tile_stored(3, sums + 16 * 32 + 16, 32 * 4);
    for (int i = 0; i < 32; i++) {
        float *out = c + i * ldc;
        _mm512_mask_storeu_ps(out, m0, _mm512_add_ps(_mm512_maskz_loadu_ps(m0, out), _mm512_load_ps(sums + i * 32)));
        _mm512_mask_storeu_ps(out + 16, m1, _mm512_add_ps(_mm512_maskz_loadu_ps(m1, out + 16), _mm512_load_ps(sums + i * 32 + 16)));
    }
}

// The product over k inputs of panels whose groups of 32 features are `group_pairs` pairs apart
// (the inputs may be a slice of longer packed ones, starting at a multiple of sixteen pairs).
SAM_BF16 static void linear_accumulate(const float *x, int64_t rows, int64_t k, int64_t ldx, const uint32_t *panels,
                                       int64_t group_pairs, int64_t n, float *c, int64_t ldc, uint32_t *scratch) {
    const int64_t kp = pairs_of(k), padded = padded_pairs(k), groups = (n + PANEL - 1) / PANEL;
    const int tiles = sam_bf16_implementation() == 2 && rows >= 32;
    if (tiles) sam_amx_configure_tiles();
    for (int64_t r0 = 0; r0 < rows; r0 += MC) {
        const int64_t mc = rows - r0 < MC ? rows - r0 : MC, blocked = tiles ? mc / 32 * 32 : 0;
        for (int64_t r = 0; r < mc; r++) {
            round_row(x + (r0 + r) * ldx, k, scratch + r * padded);
            memset(scratch + r * padded + kp, 0, (size_t)(padded - kp) * sizeof(uint32_t));
        }
        for (int64_t p0 = 0; p0 < kp; p0 += KC) {
            const int64_t depth = kp - p0 < KC ? kp - p0 : KC;
            for (int64_t g = 0; g < groups; g++) {
                const int64_t left = n - g * PANEL;
                const __mmask16 m0 = left >= 16 ? 0xFFFF : (__mmask16)((1u << left) - 1);
                const __mmask16 m1 = left >= 32 ? 0xFFFF : left <= 16 ? 0 : (__mmask16)((1u << (left - 16)) - 1);
                const uint32_t *slice = panels + (g * group_pairs + p0) * PANEL;
                // The tiles run over whole sixteens of pairs: the padding's zeros add nothing.
                for (int64_t r = 0; r < blocked; r += 32) {
                    block_amx(scratch + r * padded + p0, padded, slice, (depth + 15) / 16 * 16,
                              c + (r0 + r) * ldc + g * PANEL, ldc, m0, m1);
                }
                for (int64_t r = blocked; r < mc; r += ROWS) {
                    const int mr = mc - r < ROWS ? (int)(mc - r) : ROWS;
                    tile(scratch + r * padded + p0, padded, mr, slice, depth, c + (r0 + r) * ldc + g * PANEL, ldc, m0, m1);
                }
            }
        }
    }
    if (tiles) sam_amx_release_tiles();
}

SAM_BF16 void sam_bf16_linear_accumulate(const float *x, int64_t rows, int64_t k, int64_t ldx,
                                         const uint32_t *panels, int64_t n, float *c, int64_t ldc, uint32_t *scratch) {
    linear_accumulate(x, rows, k, ldx, panels, padded_pairs(k), n, c, ldc, scratch);
}

SAM_BF16 void sam_bf16_linear_accumulate_inputs(const float *x, int64_t rows, int64_t first, int64_t k, int64_t ldx,
                                                const uint32_t *panels, int64_t packed_k, int64_t n, float *c, int64_t ldc,
                                                uint32_t *scratch) {
    // Whole sixteens of pairs unless the slice ends the inputs: the tiles (and an odd k's last pair)
    // would read the next inputs' weights against the rounded rows' zero padding.
    if (first % 32 != 0 || first < 0 || k < 0 || first + k > packed_k || (first + k < packed_k && k % 32 != 0)) __builtin_trap();
    linear_accumulate(x, rows, k, ldx, panels + first / 2 * PANEL, padded_pairs(packed_k), n, c, ldc, scratch);
}

#else

int sam_bf16_supported(void) { return 0; }

int sam_bf16_implementation(void) { return 0; }

void sam_bf16_pack_weights(const float *w, int64_t n, int64_t k, uint32_t *panels) {
    (void)w; (void)n; (void)k; (void)panels;
    __builtin_trap();
}

void sam_bf16_pack_strided(const float *w, int64_t n, int64_t k, int64_t feature_stride, int64_t input_stride,
                           uint32_t *panels) {
    (void)w; (void)n; (void)k; (void)feature_stride; (void)input_stride; (void)panels;
    __builtin_trap();
}

void sam_bf16_linear_accumulate(const float *x, int64_t rows, int64_t k, int64_t ldx,
                                const uint32_t *panels, int64_t n, float *c, int64_t ldc, uint32_t *scratch) {
    (void)x; (void)rows; (void)k; (void)ldx; (void)panels; (void)n; (void)c; (void)ldc; (void)scratch;
    __builtin_trap();
}

void sam_bf16_linear_accumulate_inputs(const float *x, int64_t rows, int64_t first, int64_t k, int64_t ldx,
                                       const uint32_t *panels, int64_t packed_k, int64_t n, float *c, int64_t ldc,
                                       uint32_t *scratch) {
    (void)x; (void)rows; (void)first; (void)k; (void)ldx; (void)panels; (void)packed_k; (void)n; (void)c; (void)ldc;
    (void)scratch;
    __builtin_trap();
}

#endif
