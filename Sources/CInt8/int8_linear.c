// See include/int8_linear.h. One quantized activation row block (six rows) is multiplied by one
// panel (64 features) at a time, the row block's bytes broadcast four at a time against the
// panel's 256 bytes per four inputs; panels are taken in groups that stay in L2 while the rows of
// a call stream past them, as the float32 panel product does.
#include "int8_linear.h"

#include "cpu_features.h"
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#define PANEL 64
#define ROWS 6
#define GROUP_BYTES (256 * 1024)

static _Atomic int limit = -1;

// Rows are padded to whole 64-byte lines (code 128, weights 0): AMX reads 64 inputs at a time.
// The other implementations stop at the last group of four inputs.
int64_t sam_q8_row_bytes(int64_t k) { return (k + 63) / 64 * 64; }
static int64_t groups_of(int64_t k) { return (k + 3) / 4; }
int64_t sam_q8_panel_count(int64_t n) { return (n + PANEL - 1) / PANEL; }
int64_t sam_q8_panel_bytes(int64_t n, int64_t k) { return sam_q8_panel_count(n) * PANEL * sam_q8_row_bytes(k); }

void sam_q8_limit_implementation(int level) { limit = level; }

void sam_q8_pack_weights(const int8_t *w, int64_t n, int64_t k, int64_t ldw, int64_t first, int64_t count,
                         int8_t *panels, int32_t *sums) {
    const int64_t kb = sam_q8_row_bytes(k);
    for (int64_t p = first; p < first + count; p++) {
        int8_t *panel = panels + p * PANEL * kb;
        memset(panel, 0, (size_t)(PANEL * kb));
        for (int64_t f = 0; f < PANEL; f++) {
            const int64_t feature = p * PANEL + f;
            int32_t sum = 0;
            if (feature < n) {
                const int8_t *row = w + feature * ldw;
                for (int64_t i = 0; i < k; i++) {
                    panel[(i / 4) * PANEL * 4 + f * 4 + (i % 4)] = row[i];
                    sum += row[i];
                }
            }
            sums[feature] = sum;
        }
    }
}

// The one rounding rule every implementation shares: x * inv, then nearest even (the default
// rounding mode, as cvtps2dq), clamped to the symmetric range.
static inline uint8_t code_of(float x, float inv) {
    float v = nearbyintf(x * inv);
    v = v > 127.f ? 127.f : (v < -127.f ? -127.f : v);
    return (uint8_t)((int)v + 128);
}

// Folds the magnitudes of row[from..<k] into *largest; 0 when one of them is NaN or infinite.
static inline int fold_largest(const float *row, int64_t from, int64_t k, float *largest) {
    int finite = 1;
    for (int64_t i = from; i < k; i++) {
        const float a = fabsf(row[i]);
        if (!(a <= 3.4028235e38f)) finite = 0;  // NaN fails every comparison
        else if (a > *largest) *largest = a;
    }
    return finite;
}

// A row's scale (NaN for a non-finite row, 0 for an all-zero one) and the factor its codes are
// made with, 0 when the row keeps code 0 throughout.
static inline float row_scale(float largest, int finite, float *scale) {
    if (!finite) { *scale = NAN; return 0; }
    *scale = largest / 127.f;
    return largest == 0 ? 0 : 127.f / largest;
}

static void quantize_rows_portable(const float *x, int64_t rows, int64_t k, int64_t ldx, uint8_t *q, float *scales) {
    const int64_t kb = sam_q8_row_bytes(k);
    for (int64_t r = 0; r < rows; r++) {
        const float *row = x + r * ldx;
        float largest = 0;
        const int finite = fold_largest(row, 0, k, &largest);
        uint8_t *out = q + r * kb;
        memset(out, 128, (size_t)kb);
        const float inv = row_scale(largest, finite, scales + r);
        if (inv == 0) continue;
        for (int64_t i = 0; i < k; i++) out[i] = code_of(row[i], inv);
    }
}

// out = base + (float)(acc - 128 * sum) * (xscale * wscale), as one fused multiply-add.
static inline float finish(int32_t acc, int32_t sum, float xs, float ws, float base) {
    return fmaf((float)(acc - 128 * sum), xs * ws, base);
}

static void linear_portable(const uint8_t *q, const float *xscales, int64_t rows, int64_t k, const int8_t *panels,
                            const int32_t *sums, const float *wscales, int64_t n, const float *bias, int accumulate,
                            float *out, int64_t ldo) {
    const int64_t kb = sam_q8_row_bytes(k), steps = groups_of(k);
    for (int64_t p = 0; p < sam_q8_panel_count(n); p++) {
        const int8_t *panel = panels + p * PANEL * kb;
        const int64_t features = n - p * PANEL < PANEL ? n - p * PANEL : PANEL;
        for (int64_t r = 0; r < rows; r++) {
            int32_t acc[PANEL] = {0};
            const uint8_t *xr = q + r * kb;
            for (int64_t s = 0; s < steps; s++) {
                const int8_t *block = panel + s * PANEL * 4;
                for (int64_t f = 0; f < PANEL; f++) {
                    for (int b = 0; b < 4; b++) acc[f] += (int32_t)xr[s * 4 + b] * (int32_t)block[f * 4 + b];
                }
            }
            for (int64_t f = 0; f < features; f++) {
                const int64_t j = p * PANEL + f;
                float *o = out + r * ldo + j;
                const float base = accumulate ? *o : (bias ? bias[j] : 0.f);
                *o = finish(acc[f], sums[j], xscales[r], wscales[j], base);
            }
        }
    }
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#define VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma")))
#define AVX2_TARGET __attribute__((target("avx2,fma")))

#define AMX_TARGET __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512vnni,fma")))

static int cpu_level(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")
        && __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("fma") && sam_cpu_cap() >= SAM_CPU_CAP_AVX512)
        return sam_amx_usable(SAM_AMX_INT8) ? 3 : 2;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 1;
    return 0;
}

AVX2_TARGET static void quantize_rows_avx2(const float *x, int64_t rows, int64_t k, int64_t ldx, uint8_t *q, float *scales) {
    const int64_t kb = sam_q8_row_bytes(k);
    const __m256 sign = _mm256_set1_ps(-0.f), top = _mm256_set1_ps(127.f), bottom = _mm256_set1_ps(-127.f);
    const __m256 huge = _mm256_set1_ps(3.4028235e38f);
    for (int64_t r = 0; r < rows; r++) {
        const float *row = x + r * ldx;
        __m256 largest = _mm256_setzero_ps(), bad = _mm256_setzero_ps();
        int64_t i = 0;
        for (; i + 8 <= k; i += 8) {
            const __m256 a = _mm256_andnot_ps(sign, _mm256_loadu_ps(row + i));
            bad = _mm256_or_ps(bad, _mm256_cmp_ps(a, huge, _CMP_NLE_UQ));  // > max or NaN
            largest = _mm256_max_ps(largest, a);
        }
        float lanes[8];
        _mm256_storeu_ps(lanes, largest);
        float big = 0;
        for (int l = 0; l < 8; l++) big = lanes[l] > big ? lanes[l] : big;
        const int finite = fold_largest(row, i, k, &big) && _mm256_movemask_ps(bad) == 0;
        uint8_t *out = q + r * kb;
        memset(out, 128, (size_t)kb);
        const float inv = row_scale(big, finite, scales + r);
        if (inv == 0) continue;
        const __m256 vinv = _mm256_set1_ps(inv);
        const __m256i offset = _mm256_set1_epi32(128);
        i = 0;
        for (; i + 8 <= k; i += 8) {
            __m256 v = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(row + i), vinv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            v = _mm256_min_ps(_mm256_max_ps(v, bottom), top);
            const __m256i c = _mm256_add_epi32(_mm256_cvtps_epi32(v), offset);
            // 8 int32 in 0..255 to 8 bytes.
            const __m128i w16 = _mm_packus_epi32(_mm256_castsi256_si128(c), _mm256_extracti128_si256(c, 1));
            _mm_storel_epi64((__m128i *)(out + i), _mm_packus_epi16(w16, w16));
        }
        for (; i < k; i++) out[i] = code_of(row[i], inv);
    }
}

// quantize_rows_avx2 sixteen lanes at a time, the tail under a mask: the same operations on each
// value (x * inv rounded to nearest even, clamped, + 128), so the same codes.
VNNI_TARGET static void quantize_rows_avx512(const float *x, int64_t rows, int64_t k, int64_t ldx, uint8_t *q, float *scales) {
    const int64_t kb = sam_q8_row_bytes(k);
    const __m512 top = _mm512_set1_ps(127.f), bottom = _mm512_set1_ps(-127.f), huge = _mm512_set1_ps(3.4028235e38f);
    const __m512i offset = _mm512_set1_epi32(128);
    for (int64_t r = 0; r < rows; r++) {
        const float *row = x + r * ldx;
        __m512 largest = _mm512_setzero_ps();
        __mmask16 bad = 0;
        for (int64_t i = 0; i < k; i += 16) {
            const __mmask16 lanes = k - i >= 16 ? 0xFFFF : (__mmask16)((1u << (k - i)) - 1);
            const __m512 a = _mm512_abs_ps(_mm512_maskz_loadu_ps(lanes, row + i));
            bad |= _mm512_cmp_ps_mask(a, huge, _CMP_NLE_UQ);  // > max or NaN
            largest = _mm512_max_ps(largest, a);
        }
        uint8_t *out = q + r * kb;
        memset(out, 128, (size_t)kb);
        const float inv = row_scale(_mm512_reduce_max_ps(largest), bad == 0, scales + r);
        if (inv == 0) continue;
        const __m512 vinv = _mm512_set1_ps(inv);
        for (int64_t i = 0; i < k; i += 16) {
            const __mmask16 lanes = k - i >= 16 ? 0xFFFF : (__mmask16)((1u << (k - i)) - 1);
            __m512 v = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, row + i), vinv),
                                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            v = _mm512_min_ps(_mm512_max_ps(v, bottom), top);
            _mm_mask_storeu_epi8(out + i, lanes, _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v), offset)));
        }
    }
}

// Rows r0..r0+nr-1 (nr <= 6) of one panel, all 64 features: 6 x 4 accumulators of 16 features.
// A full block starts its sums in registers: zeroing `acc` first compiled to a memset of its 1.5 KB on
// every call, 3% of MobileSAM's encoder in int8 products (Zen 4).
VNNI_TARGET static void panel_vnni(const uint8_t *q, int64_t kb, int64_t steps, int nr, const int8_t *panel,
                                   __m512i acc[ROWS][4]) {
#define VNNI_STEP(R) do { \
        const __m512i x = _mm512_set1_epi32(*(const int32_t *)(q + (R) * kb + s * 4)); \
        acc[R][0] = _mm512_dpbusd_epi32(acc[R][0], x, w0); acc[R][1] = _mm512_dpbusd_epi32(acc[R][1], x, w1); \
        acc[R][2] = _mm512_dpbusd_epi32(acc[R][2], x, w2); acc[R][3] = _mm512_dpbusd_epi32(acc[R][3], x, w3); \
    } while (0)
    if (nr == ROWS) {
        __m512i a00 = _mm512_setzero_si512(), a01 = a00, a02 = a00, a03 = a00;
        __m512i a10 = a00, a11 = a00, a12 = a00, a13 = a00, a20 = a00, a21 = a00, a22 = a00, a23 = a00;
        __m512i a30 = a00, a31 = a00, a32 = a00, a33 = a00, a40 = a00, a41 = a00, a42 = a00, a43 = a00;
        __m512i a50 = a00, a51 = a00, a52 = a00, a53 = a00;
        const uint8_t *q0 = q, *q1 = q + kb, *q2 = q + 2 * kb, *q3 = q + 3 * kb, *q4 = q + 4 * kb, *q5 = q + 5 * kb;
        for (int64_t s = 0; s < steps; s++) {
            const int8_t *block = panel + s * PANEL * 4;
            const __m512i w0 = _mm512_loadu_si512(block), w1 = _mm512_loadu_si512(block + 64);
            const __m512i w2 = _mm512_loadu_si512(block + 128), w3 = _mm512_loadu_si512(block + 192);
            __m512i x;
#define ROW_STEP(QR, A0, A1, A2, A3) \
            x = _mm512_set1_epi32(*(const int32_t *)(QR + s * 4)); \
            A0 = _mm512_dpbusd_epi32(A0, x, w0); A1 = _mm512_dpbusd_epi32(A1, x, w1); \
            A2 = _mm512_dpbusd_epi32(A2, x, w2); A3 = _mm512_dpbusd_epi32(A3, x, w3);
            ROW_STEP(q0, a00, a01, a02, a03)
            ROW_STEP(q1, a10, a11, a12, a13)
            ROW_STEP(q2, a20, a21, a22, a23)
            ROW_STEP(q3, a30, a31, a32, a33)
            ROW_STEP(q4, a40, a41, a42, a43)
            ROW_STEP(q5, a50, a51, a52, a53)
#undef ROW_STEP
        }
        acc[0][0] = a00; acc[0][1] = a01; acc[0][2] = a02; acc[0][3] = a03;
        acc[1][0] = a10; acc[1][1] = a11; acc[1][2] = a12; acc[1][3] = a13;
        acc[2][0] = a20; acc[2][1] = a21; acc[2][2] = a22; acc[2][3] = a23;
        acc[3][0] = a30; acc[3][1] = a31; acc[3][2] = a32; acc[3][3] = a33;
        acc[4][0] = a40; acc[4][1] = a41; acc[4][2] = a42; acc[4][3] = a43;
        acc[5][0] = a50; acc[5][1] = a51; acc[5][2] = a52; acc[5][3] = a53;
        return;
    }
    for (int r = 0; r < ROWS; r++) for (int c = 0; c < 4; c++) acc[r][c] = _mm512_setzero_si512();
    for (int64_t s = 0; s < steps; s++) {
        const int8_t *block = panel + s * PANEL * 4;
        const __m512i w0 = _mm512_loadu_si512(block), w1 = _mm512_loadu_si512(block + 64);
        const __m512i w2 = _mm512_loadu_si512(block + 128), w3 = _mm512_loadu_si512(block + 192);
        for (int r = 0; r < nr; r++) VNNI_STEP(r);
    }
#undef VNNI_STEP
}

// Sixteen features from j (fewer past n) of `nr` rows, row r's sums at sums_of_rows[r * step]:
// out = base + (float)(sum - 128 * Σw) * (xscale * wscale), base the bias (or 0), or out itself
// when accumulating. Every kernel finishes its sums here, so the same sums give the same bits.
VNNI_TARGET static inline void finish16(const __m512i *sums_of_rows, int64_t step, int nr, int64_t first_row, int64_t j,
                                        int64_t n, const int32_t *sums, const float *xscales, const float *wscales,
                                        const float *bias, int accumulate, float *out, int64_t ldo) {
    const int64_t lanes = n - j < 16 ? n - j : 16;
    const __mmask16 mask = (__mmask16)(lanes == 16 ? 0xFFFF : ((1u << lanes) - 1));
    const __m512i sum128 = _mm512_mullo_epi32(_mm512_loadu_si512(sums + j), _mm512_set1_epi32(128));
    const __m512 ws = _mm512_maskz_loadu_ps(mask, wscales + j);
    const __m512 b = bias ? _mm512_maskz_loadu_ps(mask, bias + j) : _mm512_setzero_ps();
    for (int r = 0; r < nr; r++) {
        float *o = out + (first_row + r) * ldo + j;
        const __m512 base = accumulate ? _mm512_maskz_loadu_ps(mask, o) : b;
        const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(xscales[first_row + r]), ws);
        const __m512i sum = _mm512_loadu_si512(sums_of_rows + r * step);
        const __m512 v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(sum, sum128)), scale, base);
        _mm512_mask_storeu_ps(o, mask, v);
    }
}

VNNI_TARGET static void store_vnni(__m512i acc[ROWS][4], int nr, int64_t first_row, int64_t p, int64_t n,
                                   const int32_t *sums, const float *xscales, const float *wscales, const float *bias,
                                   int accumulate, float *out, int64_t ldo) {
    for (int c = 0; c < 4 && p * PANEL + c * 16 < n; c++) {
        finish16(&acc[0][c], 4, nr, first_row, p * PANEL + c * 16, n, sums, xscales, wscales, bias, accumulate, out, ldo);
    }
}

VNNI_TARGET static void linear_vnni(const uint8_t *q, const float *xscales, int64_t rows, int64_t k, const int8_t *panels,
                                    const int32_t *sums, const float *wscales, int64_t n, const float *bias, int accumulate,
                                    float *out, int64_t ldo) {
    const int64_t kb = sam_q8_row_bytes(k), panel_bytes = PANEL * kb, count = sam_q8_panel_count(n);
    int64_t group = GROUP_BYTES / panel_bytes;
    if (group < 1) group = 1;
    __m512i acc[ROWS][4];
    for (int64_t g = 0; g < count; g += group) {
        const int64_t end = g + group < count ? g + group : count;
        for (int64_t r = 0; r < rows; r += ROWS) {
            const int nr = rows - r < ROWS ? (int)(rows - r) : ROWS;
            for (int64_t p = g; p < end; p++) {
                panel_vnni(q + r * kb, kb, groups_of(k), nr, panels + p * panel_bytes, acc);
                store_vnni(acc, nr, r, p, n, sums, xscales, wscales, bias, accumulate, out, ldo);
            }
        }
    }
}

// AMX: rows in blocks of 32 by features in blocks of 32 (half a panel), as four 16 x 16 int32 tiles
// summed by tdpbusd over 64 inputs at a time: a tile of sixteen rows' codes (64 bytes each) times a
// tile of the panel's sixteen four-input groups for sixteen features, which is the panel layout read
// with a 256-byte stride (rows and panels are padded to 64 inputs with weights 0). Rows past the
// last multiple of 32 go to linear_vnni. Integer sums are exact in any order and are finished by
// finish16, as linear_vnni's are, so the bits are linear_vnni's.
AMX_TARGET static void block_amx(const uint8_t *q, int64_t kb, const int8_t *panel, int64_t c0, int32_t *acc) {
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    for (int64_t s = 0; s < kb; s += 64) {
        const int8_t *groups = panel + (s / 4) * PANEL * 4 + c0 * 4;
        _tile_loadd(4, q + s, kb);
        _tile_loadd(5, q + 16 * kb + s, kb);
        _tile_loadd(6, groups, PANEL * 4);
        _tile_loadd(7, groups + 64, PANEL * 4);
        _tile_dpbusd(0, 4, 6); _tile_dpbusd(1, 4, 7); _tile_dpbusd(2, 5, 6); _tile_dpbusd(3, 5, 7);
    }
    _tile_stored(0, acc, 32 * 4); _tile_stored(1, acc + 16, 32 * 4);
    _tile_stored(2, acc + 16 * 32, 32 * 4); _tile_stored(3, acc + 16 * 32 + 16, 32 * 4);
}

// The 32 x 32 block's sums (acc, rows 32 apart), finished into out.
AMX_TARGET static void finish_amx(const int32_t *acc, int64_t c0, int64_t first_row, int64_t p, int64_t n, const int32_t *sums,
                                  const float *xscales, const float *wscales, const float *bias, int accumulate,
                                  float *out, int64_t ldo) {
    for (int half = 0; half < 2 && p * PANEL + c0 + half * 16 < n; half++) {
        finish16((const __m512i *)(acc + half * 16), 2, 32, first_row, p * PANEL + c0 + half * 16, n, sums, xscales, wscales,
                 bias, accumulate, out, ldo);
    }
}

AMX_TARGET static void linear_amx(const uint8_t *q, const float *xscales, int64_t rows, int64_t k, const int8_t *panels,
                                  const int32_t *sums, const float *wscales, int64_t n, const float *bias, int accumulate,
                                  float *out, int64_t ldo) {
    const int64_t kb = sam_q8_row_bytes(k), blocked = rows / 32 * 32;
    const int64_t panel_bytes = PANEL * kb, count = sam_q8_panel_count(n);
    if (blocked > 0) {
        sam_amx_configure_tiles();
        int32_t acc[32 * 32] __attribute__((aligned(64)));
        int64_t group = GROUP_BYTES / panel_bytes;
        if (group < 1) group = 1;
        for (int64_t g = 0; g < count; g += group) {
            const int64_t end = g + group < count ? g + group : count;
            for (int64_t r = 0; r < blocked; r += 32) {
                for (int64_t p = g; p < end; p++) {
                    const int8_t *panel = panels + p * panel_bytes;
                    for (int64_t c0 = 0; c0 < PANEL && p * PANEL + c0 < n; c0 += 32) {
                        block_amx(q + r * kb, kb, panel, c0, acc);
                        finish_amx(acc, c0, r, p, n, sums, xscales, wscales, bias, accumulate, out, ldo);
                    }
                }
            }
        }
        sam_amx_release_tiles();
    }
    if (blocked < rows) {
        linear_vnni(q + blocked * kb, xscales + blocked, rows - blocked, k, panels, sums, wscales, n, bias, accumulate,
                    out + blocked * ldo, ldo);
    }
}

// AVX2: each feature's four codes widened to 16 bits, multiplied with the row's four (unsigned)
// codes by vpmaddwd into two 32-bit partial sums per feature, added in pairs at the end. Exact,
// as vpdpbusd is; about half its multiplies per instruction.
AVX2_TARGET static void linear_avx2(const uint8_t *q, const float *xscales, int64_t rows, int64_t k, const int8_t *panels,
                                    const int32_t *sums, const float *wscales, int64_t n, const float *bias, int accumulate,
                                    float *out, int64_t ldo) {
    const int64_t kb = sam_q8_row_bytes(k), panel_bytes = PANEL * kb, count = sam_q8_panel_count(n), steps = groups_of(k);
    for (int64_t p = 0; p < count; p++) {
        const int8_t *panel = panels + p * panel_bytes;
        for (int64_t r0 = 0; r0 < rows; r0 += 4) {
            const int nr = rows - r0 < 4 ? (int)(rows - r0) : 4;
            // 4 rows x 64 features: per row 16 registers of (4 features x 2 partial sums).
            for (int half = 0; half < 2; half++) {  // 32 features at a time keeps 4 x 8 accumulators
                __m256i acc[4][8];
                for (int r = 0; r < 4; r++) for (int c = 0; c < 8; c++) acc[r][c] = _mm256_setzero_si256();
                for (int64_t s = 0; s < steps; s++) {
                    const int8_t *block = panel + s * PANEL * 4 + half * 128;
                    __m256i w[8];
                    for (int c = 0; c < 8; c++) w[c] = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(block + c * 16)));
                    for (int r = 0; r < nr; r++) {
                        const uint32_t four = *(const uint32_t *)(q + (r0 + r) * kb + s * 4);
                        const __m256i x = _mm256_cvtepu8_epi16(_mm_set1_epi32((int)four));
                        for (int c = 0; c < 8; c++) acc[r][c] = _mm256_add_epi32(acc[r][c], _mm256_madd_epi16(x, w[c]));
                    }
                }
                for (int r = 0; r < nr; r++) {
                    int32_t partial[64], total[32];
                    for (int c = 0; c < 8; c++) _mm256_storeu_si256((__m256i *)(partial + c * 8), acc[r][c]);
                    for (int f = 0; f < 32; f++) total[f] = partial[2 * f] + partial[2 * f + 1];
                    for (int f = 0; f < 32; f++) {
                        const int64_t j = p * PANEL + half * 32 + f;
                        if (j >= n) break;
                        float *o = out + (r0 + r) * ldo + j;
                        const float base = accumulate ? *o : (bias ? bias[j] : 0.f);
                        *o = finish(total[f], sums[j], xscales[r0 + r], wscales[j], base);
                    }
                }
            }
        }
    }
}
#else
static int cpu_level(void) { return 0; }
#endif

int sam_q8_implementation(void) {
    const int level = cpu_level();
    return limit >= 0 && limit < level ? limit : level;
}

void sam_q8_quantize_rows(const float *x, int64_t rows, int64_t k, int64_t ldx, uint8_t *q, float *scales) {
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
    const int level = sam_q8_implementation();
    if (level >= 2) { quantize_rows_avx512(x, rows, k, ldx, q, scales); return; }
    if (level == 1) { quantize_rows_avx2(x, rows, k, ldx, q, scales); return; }
#endif
    quantize_rows_portable(x, rows, k, ldx, q, scales);
}

void sam_q8_linear(const uint8_t *q, const float *xscales, int64_t rows, int64_t k, const int8_t *panels,
                   const int32_t *sums, const float *wscales, int64_t n, const float *bias, int accumulate, float *out,
                   int64_t ldo) {
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
    const int level = sam_q8_implementation();
    if (level == 3) { linear_amx(q, xscales, rows, k, panels, sums, wscales, n, bias, accumulate, out, ldo); return; }
    if (level == 2) { linear_vnni(q, xscales, rows, k, panels, sums, wscales, n, bias, accumulate, out, ldo); return; }
    if (level == 1) { linear_avx2(q, xscales, rows, k, panels, sums, wscales, n, bias, accumulate, out, ldo); return; }
#endif
    linear_portable(q, xscales, rows, k, panels, sums, wscales, n, bias, accumulate, out, ldo);
}
