#ifndef SAM_INT8_LINEAR_H
#define SAM_INT8_LINEAR_H

// Linear layers with int8 weights (per output feature scales) and int8 activations (per row scales,
// chosen on each call from the row's largest magnitude): the integer sums are exact, so every
// implementation below (AVX512_VNNI, AVX2, portable C) gives the same bits.
//
// Activations are stored as unsigned codes (code + 128), as vpdpbusd multiplies unsigned by signed
// bytes; the 128 is taken out again with each feature's code sum:
//   out[r, j] = base + (float)(Σ_i (xq[r,i] + 128) w[j,i] - 128 Σ_i w[j,i]) * (xscale[r] * wscale[j])
// as one fused multiply-add, base being bias[j] (or 0), or out[r, j] itself when accumulating.
//
// Weights are packed into panels of 64 features: for each group of four inputs (4t..4t+3), the 64
// features' four codes, feature f's at bytes 4f..4f+3; zero past the last feature and input. Rows
// and panels are padded to a multiple of 64 inputs, the span of one AMX tile row.

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Which implementation this CPU runs: 3 = AMX-INT8 tiles (with AVX512_VNNI for rows past the last
/// block of 32), when the CPU has them and the OS grants the process their state, 2 = AVX-512 (F, BW,
/// VL) with AVX512_VNNI, 1 = AVX2, 0 = portable C.
int sam_q8_implementation(void);

/// Forces an implementation no better than `level` (tests compare them); -1 restores the CPU's own.
void sam_q8_limit_implementation(int level);

/// Bytes of one quantized activation row of k inputs (k rounded up to a multiple of 64).
int64_t sam_q8_row_bytes(int64_t k);

/// Bytes `sam_q8_pack_weights` writes for n features of k inputs.
int64_t sam_q8_panel_bytes(int64_t n, int64_t k);

/// Panels of 64 features for n features.
int64_t sam_q8_panel_count(int64_t n);

/// Packs codes w [n, k] (rows ldw bytes apart) for panels first..first+count-1 into `panels`
/// (sam_q8_panel_bytes(n, k) bytes in all), and each feature's code sum into sums[feature]
/// (sam_q8_panel_count(n) * 64 entries, zero past n).
void sam_q8_pack_weights(const int8_t *w, int64_t n, int64_t k, int64_t ldw, int64_t first, int64_t count,
                         int8_t *panels, int32_t *sums);

/// Quantizes `rows` rows of x (k floats, ldx apart): scale[r] = max |x[r, :]| / 127, code =
/// round-to-nearest-even(x * (127 / max)) stored + 128, rows sam_q8_row_bytes(k) bytes apart, padded
/// with 128. An all-zero row has scale 0; a row holding a non-finite value has scale NaN.
void sam_q8_quantize_rows(const float *x, int64_t rows, int64_t k, int64_t ldx, uint8_t *q, float *scales);

/// out[r, j] for r < rows, j < n as above: q from sam_q8_quantize_rows (k inputs), panels and sums
/// from sam_q8_pack_weights, wscales[j] the features' scales; `bias` may be NULL; `accumulate` 1 adds
/// onto out instead of bias. out rows ldo floats apart. Single-threaded. k at most 65536.
void sam_q8_linear(const uint8_t *q, const float *xscales, int64_t rows, int64_t k,
                   const int8_t *panels, const int32_t *sums, const float *wscales, int64_t n,
                   const float *bias, int accumulate, float *out, int64_t ldo);

#ifdef __cplusplus
}
#endif

#endif
