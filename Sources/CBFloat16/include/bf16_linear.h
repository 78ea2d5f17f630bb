#ifndef SAM_BF16_LINEAR_H
#define SAM_BF16_LINEAR_H

// Linear layers with bfloat16 products and float32 sums, for CPUs with AVX512_BF16 (vdpbf16ps):
// about twice the multiply-adds per cycle of float32 FMA, at bfloat16's 8-bit significand for
// weights and inputs. An opt-in lower-precision path; SAMKernels' float32 kernels are the default.
//
// Weights are packed once into panels: for each group of 32 output features, for each pair of input
// features (2p, 2p+1), the 32 features' two weights as one 32-bit (bf16, bf16) pair, zero past the
// last feature and past the last input, the pairs padded to a multiple of 16 (an AMX tile row).
// Inputs are rounded to bf16 block by block inside the call.
// Rounding is round-to-nearest-even (vcvtneps2bf16); like vdpbf16ps it treats subnormals as zero.

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when this CPU runs the functions below (AVX-512F, BW, VL and AVX512_BF16; x86-64 only), else 0.
int sam_bf16_supported(void);

/// Which implementation runs: 2 = AMX-BF16 tiles for whole blocks of 32 rows (vdpbf16ps for the rest),
/// when the CPU has them and the OS grants the process their state; 1 = vdpbf16ps; 0 = none.
/// Both sum in float32 with exact bfloat16 products, in different orders.
int sam_bf16_implementation(void);

/// Forces an implementation no better than `level` (tests compare them); -1 restores the CPU's own.
void sam_bf16_limit_implementation(int level);

/// The number of uint32 pairs `sam_bf16_pack_weights` writes for a [n, k] weight.
int64_t sam_bf16_panel_count(int64_t n, int64_t k);

/// Packs w [n, k] (row r of output feature r, k inputs, rows k floats apart) into `panels`
/// (sam_bf16_panel_count(n, k) pairs). Only call when sam_bf16_supported() is 1.
void sam_bf16_pack_weights(const float *w, int64_t n, int64_t k, uint32_t *panels);

/// sam_bf16_pack_weights for a weight whose element (feature j, input i) is w[j * feature_stride + i * input_stride]:
/// attention's keys (rows of a wider tensor) and values (packed by value channel, the keys as inputs).
void sam_bf16_pack_strided(const float *w, int64_t n, int64_t k, int64_t feature_stride, int64_t input_stride,
                           uint32_t *panels);

/// The number of uint32 pairs of scratch `sam_bf16_linear_accumulate` needs for k inputs.
int64_t sam_bf16_scratch_count(int64_t k);

/// The scratch a call on at most `rows` rows needs (no more than sam_bf16_scratch_count(k)).
int64_t sam_bf16_scratch_count_rows(int64_t k, int64_t rows);

/// c[r, j] += Σ_i bf16(x[r, i]) * bf16(w[j, i]) for r < rows, j < n, i < k, with float32 sums:
/// x rows ldx floats apart, c rows ldc floats apart, w packed by sam_bf16_pack_weights, `scratch`
/// sam_bf16_scratch_count(k) pairs. Single-threaded. Only call when sam_bf16_supported() is 1.
void sam_bf16_linear_accumulate(const float *x, int64_t rows, int64_t k, int64_t ldx,
                                const uint32_t *panels, int64_t n, float *c, int64_t ldc, uint32_t *scratch);

/// sam_bf16_linear_accumulate over inputs [first, first + k) of a weight packed with `packed_k` inputs
/// (x holds those k inputs; `first` a multiple of 32, and k too unless the slice ends the inputs):
/// attention's values over one block of keys.
void sam_bf16_linear_accumulate_inputs(const float *x, int64_t rows, int64_t first, int64_t k, int64_t ldx,
                                       const uint32_t *panels, int64_t packed_k, int64_t n, float *c, int64_t ldc,
                                       uint32_t *scratch);

#ifdef __cplusplus
}
#endif

#endif
