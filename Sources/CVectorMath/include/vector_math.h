#ifndef SAM_VECTOR_MATH_H
#define SAM_VECTOR_MATH_H

// Sixteen-lane versions of SAMKernels' and SAMImage's float loops, for CPUs with AVX-512. Swift code is
// built for one vector width (-target-cpu haswell: eight lanes), so the wider loops live here,
// compiled for AVX-512 function by function and chosen at run time. Each computes exactly what its
// Swift counterpart does, operation by operation, so results are the same bits on either path.
// The panel product at the end has no such counterpart: on AVX-512 CPUs it stands in for OpenBLAS's
// sgemm in linear layers and wide-head attention, with its own (tested) rounding order.

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when this CPU runs the AVX-512 functions below (AVX-512F; x86-64 only), else 0.
int sam_vector_math_has_avx512(void);

/// row[j] = exp(row[j] - shift) in place for j < count (a multiple of 8), with
/// SAMKernels' `exp8` (same constants, same fused multiply-adds); adds element j to
/// sums[j % 8] in increasing j, as `Kernels.exponentiateVectors` does. Only call when
/// sam_vector_math_has_avx512() is 1.
void sam_exponentiate_avx512(float *row, int64_t count, float shift, float sums[8]);

/// The width pass of a bilinear upscale, sixteen outputs per block, blocks in runs: run r covers
/// run_counts[r] blocks whose bases are run_bases[r], + run_steps[r], ...; for a block of run r with
/// base `base` and lane l, x0 = source[base + lanes0[16r + l]], x1 = source[base + lanes1[16r + l]]
/// (lane offsets 0...15, so each block reads the sixteen floats at source + base), and its output is
/// fma(x0, w0[16r + l], x1 * w1[16r + l]); outputs follow one another from `out`. SAMImage's
/// `TorchBilinear` width resize operation by operation. Only call when sam_vector_math_has_avx512() is 1.
void sam_resize_width_runs_avx512(const float *source, const int32_t *run_bases, const int32_t *run_steps,
                                  const int32_t *run_counts, int64_t runs, const int32_t *lanes0,
                                  const int32_t *lanes1, const float *w0, const float *w1, float *out);

/// out[x] = fma(top[x], w0, bottom[x] * w1) for x < count (the height pass of the same upscale), with
/// streaming stores for out's 64-byte-aligned lines: for output rows written once and not read
/// soon. Only call when sam_vector_math_has_avx512() is 1.
void sam_blend_rows_streaming_avx512(const float *top, float w0, const float *bottom, float w1, int64_t count,
                                     float *out);

/// The largest of row[0..<count] (count a multiple of 8; -inf for none), as
/// `Kernels.maxOfVectors` finds it. Only call when sam_vector_math_has_avx512() is 1.
float sam_maximum_avx512(const float *row, int64_t count);

/// A stable softmax's numerators for `rows` rows `count` floats apart (count a multiple of 8), in
/// place: each row's maximum as `sam_maximum_avx512` finds it, then `sam_exponentiate_avx512` of
/// the row minus it, and inverse_sums[r] = 1 / the lane sums folded as `Kernels.horizontalSum`
/// does ((v0 + v4) + (v1 + v5)) + ((v2 + v6) + (v3 + v7)): those calls row by row, in one call.
/// Only call when sam_vector_math_has_avx512() is 1.
void sam_softmax_numerators_avx512(float *rows_base, int64_t rows, int64_t count, float *inverse_sums);

/// One query's scores over a grid of keys with SAM ViT's decomposed relative positions: x[j] =
/// row[j] + (heights[j / grid_width] + widths[j % grid_width]) for j < grid_height * grid_width; row[j]
/// becomes exp(x[j] - max x) in place (exp as sam_exponentiate_avx512's), and the inverse of their sum
/// is returned, for the caller to apply after the values are summed. Two passes over the row instead of
/// an add, a maximum, an exponentiation and a scaling. Only call when sam_vector_math_has_avx512() is 1.
float sam_relative_softmax_numerators_avx512(float *row, const float *heights, const float *widths, int64_t grid_height,
                                             int64_t grid_width);

/// sam_relative_softmax_numerators_avx512 for grids narrower than sixteen keys (SAM ViT's 14x14
/// windows), the same x and exponentials: x is gathered key row by key row into `scratch` (grid_height *
/// grid_width + 16 floats), then the maximum, exponentials and sum run along it in whole vectors, so
/// one masked store per row is left instead of one per key row (masked stores are slow on Zen 4).
float sam_relative_softmax_numerators_narrow_avx512(float *row, const float *heights, const float *widths,
                                                    int64_t grid_height, int64_t grid_width, float *scratch);

/// row[j] *= factor for j < count (a multiple of 8). Only call when sam_vector_math_has_avx512() is 1.
void sam_scale_avx512(float *row, int64_t count, float factor);

/// values[i] = GELU_tanh(values[i]) in place for i < count (a multiple of 8), with SAMKernels'
/// `geluTanh8` (the same exponential as sam_exponentiate_avx512's, same fused multiply-adds). Only
/// call when sam_vector_math_has_avx512() is 1.
void sam_gelu_tanh_avx512(float *values, int64_t count);

/// values[i] = GELU(values[i]) in place for i < count (a multiple of 8), with SAMKernels' `gelu8`
/// (the same erf fit, same fused multiply-adds). Only call when sam_vector_math_has_avx512() is 1.
void sam_gelu_avx512(float *values, int64_t count);

/// One output row of a 3x3 depthwise convolution, out[ox] for first_column <= ox < end_column: bias plus
/// the taps of the three input rows at columns ox * stride - padding ... + 2 (stride 1 or 2), which must
/// lie inside the rows, with SAMKernels' `depthwise3x3Row` (its multiplies and adds, the same order, no
/// fused multiply-add: the same bits). Only call when sam_vector_math_has_avx512() is 1.
void sam_depthwise3x3_row_avx512(const float *top, const float *middle, const float *bottom, float *out,
                                 int64_t first_column, int64_t end_column, int64_t stride, int64_t padding,
                                 const float k[9], float bias);

/// out[r, c] = row_scales[r * scale_stride] * Σ_t a[r, t] * b[t, c] for r < rows, t < depth,
/// c < columns (a multiple of 8), rows of a, b and out a_stride, b_stride and out_stride apart:
/// each element a fused multiply-add chain over t from zero, then one multiply, as SAMKernels'
/// `scaledRowsProduct`. scale_stride 0 gives every row the same scale. Only call when
/// sam_vector_math_has_avx512() is 1.
void sam_rows_product_avx512(const float *a, int64_t a_stride, int64_t rows, int64_t depth,
                             const float *b, int64_t b_stride, int64_t columns,
                             const float *row_scales, int64_t scale_stride,
                             float *out, int64_t out_stride);

/// SAM ViT's decomposed relative positions of `rows` queries that share one table (a query grid row's
/// rel_h, a query grid column's rel_w): out[r, k] = Σ_d x[r, d] * transposed[d, k] for r < rows, d < depth,
/// k < lanes (a multiple of 16), rows of x and out x_stride and out_stride apart, the table's rows
/// `lanes` apart (zero past its keys): each sum in eight fused multiply-add chains (d % 8), added
/// ((c0 + c4) + (c1 + c5)) + ((c2 + c6) + (c3 + c7)). Only call when sam_vector_math_has_avx512() is 1.
void sam_relative_positions_avx512(const float *x, int64_t x_stride, int64_t rows, int64_t depth,
                                   const float *transposed, int64_t lanes, float *out, int64_t out_stride);

/// One head of attention with sixteen-dim heads for `rows` queries over `keys` keys (few: the
/// decoder's prompt tokens), queries sixteen at a time on the lanes: out[r, 0..<16] =
/// softmax(scale * q[r] · k[j] over j) · v[j], rows of q, k, v and out q_stride, k_stride, v_stride
/// and out_stride apart. The same bits as the row layout (`sam_rows_product_avx512` around
/// `sam_softmax_numerators_avx512`, whose order each element keeps), without its horizontal steps.
/// `scratch` holds 16 * keys floats. Only call when sam_vector_math_has_avx512() is 1.
void sam_attention_query_lanes_avx512(const float *q, int64_t q_stride, int64_t rows,
                                      const float *k, int64_t k_stride, const float *v, int64_t v_stride,
                                      int64_t keys, float scale, float *scratch,
                                      float *out, int64_t out_stride);

/// The most masks `sam_mask_head_tail_avx512` makes at once.
#define SAM_MASK_HEAD_MAX_MASKS 8

/// The mask head's last steps for a band of its middle map (SAMKernels' `maskHead`): `products`
/// [middle_rows * middle_width, 4 * channels] holds each middle pixel's second transposed-convolution
/// taps (i, j) in order, channels contiguous; output pixel (2y + i, 2x + j) is u = GELU(tap (i, j) of
/// middle pixel (y, x) + bias) (as `sam_gelu_avx512`), and mask m's logit there is the fused
/// multiply-add chain over channels c from zero of hypernetwork[m * channels + c] * u[c], stored at
/// out + m * mask_stride + row * out_stride + column. channels a multiple of 16, middle_width of 8,
/// masks at most SAM_MASK_HEAD_MAX_MASKS. Only call when sam_vector_math_has_avx512() is 1.
void sam_mask_head_tail_avx512(const float *products, int64_t middle_rows, int64_t middle_width, int64_t channels,
                               const float *bias, const float *hypernetwork, int64_t masks, float *out, int64_t out_stride,
                               int64_t mask_stride);

/// Floats of the panels `sam_pack_panels` makes for a linear weight [n, k]: n rounded up to 32, times k.
int64_t sam_panel_floats(int64_t n, int64_t k);

/// Packs panels first_panel ..< first_panel + panel_count of a weight w of n output features by k inputs,
/// element (c, t) at w[c * feature_stride + t * input_stride] (PyTorch's linear weight [n, k]: k, 1),
/// into `panels` (sam_panel_floats(n, k) floats, 64-byte aligned): panel p is k rows of 32 floats,
/// row t holding w(32p + j, t) for j < 32, zero past feature n.
void sam_pack_panels(const float *w, int64_t n, int64_t k, int64_t feature_stride, int64_t input_stride,
                     int64_t first_panel, int64_t panel_count, float *panels);

/// out[r, c] = scale * (bias[c] + Σ_t a[r, t] * w(c, t)) for r < rows, t < k and the output features c of
/// panels first_panel ..< first_panel + panel_count (c < n), w packed by sam_pack_panels, rows of a and
/// out a_stride and out_stride floats apart, bias NULL for none: each element one fused multiply-add
/// chain over t from its bias when k <= 512; longer, in blocks of 512 inputs, the first block's chain
/// from the bias and each later block's from zero, added to the sum so far; then one multiply (exact
/// for scale 1). out must not overlap a.
/// Single-threaded. Only call when sam_vector_math_has_avx512() is 1.
void sam_panel_product_avx512(const float *a, int64_t a_stride, int64_t rows, int64_t k,
                              const float *panels, int64_t n, int64_t first_panel, int64_t panel_count,
                              float scale, const float *bias, float *out, int64_t out_stride);

/// sam_panel_product_avx512 with its register block named instead of chosen for the CPU: `six_rows` 1, six
/// rows by two panels at a time (what Intel's cores run), 0, twelve rows by one panel (the rest). The
/// same bits either way; for tests and timing of either block on any CPU with AVX-512.
void sam_panel_product_blocks_avx512(const float *a, int64_t a_stride, int64_t rows, int64_t k,
                                     const float *panels, int64_t n, int64_t first_panel, int64_t panel_count,
                                     float scale, const float *bias, float *out, int64_t out_stride, int six_rows);

/// 1 when this CPU has AVX2 and FMA (every x86-64 CPU the package's AVX2 kernels are for).
int sam_vector_math_has_avx2_fma(void);

/// sam_panel_product_avx512 on CPUs with AVX2 and FMA: the same panels, passes and chains, so the same bits,
/// in blocks of six rows by sixteen lanes. Single-threaded. Only call when sam_vector_math_has_avx2_fma() is 1.
void sam_panel_product_avx2(const float *a, int64_t a_stride, int64_t rows, int64_t k,
                            const float *panels, int64_t n, int64_t first_panel, int64_t panel_count,
                            float scale, const float *bias, float *out, int64_t out_stride);

#ifdef __cplusplus
}
#endif

#endif
