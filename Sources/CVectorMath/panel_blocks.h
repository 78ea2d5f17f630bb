// What the panel products (panel_product.c for AVX-512, panel_product_avx2.c for AVX2) share: the packed
// layout, how a product is split into passes and groups, and the row pointers of a register block.
#ifndef SAM_PANEL_BLOCKS_H
#define SAM_PANEL_BLOCKS_H

#include <stdint.h>

#define PANEL 32
// Panels of one group together stay under ~512 KB (half of a Zen 4 L2), so each row block reuses
// them from L2 while the block's rows come from L1.
#define GROUP_FLOATS (128 * 1024)
// Inputs per pass over the rows. A product over more than LONG_INPUTS inputs (ViT MLPs' second products,
// 3072 to 5120 inputs; attention's values over SAM 2's 28,736 memory keys; TinyViT's 1280) is done in
// passes of SHORT_PASS inputs, so a group holds eight panels' slices and each row block crosses all
// eight before the next block comes: with whole panels of 3072 inputs a group held one, and every row
// block came again from L2 for each (one core, alternating runs: 4096 x 3072 -> 768, 117-131 -> 143-147
// GFLOP/s; 4096 x 5120 -> 1280, 121-124 -> 124-145). Each later pass sums its inputs from zero and adds
// the sum so far, as blocked BLAS kernels do: one chain over thousands of inputs carries more rounding
// error than blocks of 512 (the encoders' mean error against PyTorch fell 10-15%), for the same loads
// and stores as resuming the chain, and no loss measured on 768-, 640- or 1280-input products.
#define LONG_INPUTS 512
#define SHORT_PASS 512

// The body of every register block (block12 and block6 in panel_product.c, block6 in panel_product_avx2.c),
// over its rows X(0) X(1) ... (ROWS) and inputs t_begin ..< t_end: the accumulators declared (DECLARE), the
// output lines fetched for writing (PREFETCH_OUT); for each input, its weights loaded (LOAD) and multiplied
// into every row's chains (ACCUMULATE), and with `next`, a line of each next row fetched every sixteen
// inputs (PREFETCH_NEXT); then an earlier pass's sums added when `adds_earlier`, the scale applied when
// `scaled`, the stores (STORE). Every chain runs over t in order, so each output's bits depend on its
// start alone.
#define PANEL_BLOCK_BODY(ROWS, DECLARE, PREFETCH_OUT, PREFETCH_NEXT, LOAD, ACCUMULATE, ADD_EARLIER, SCALE, STORE) \
    ROWS(DECLARE) \
    ROWS(PREFETCH_OUT) \
    int64_t t = t_begin; \
    if (next) { \
        while (t + 16 <= t_end) { \
            ROWS(PREFETCH_NEXT) \
            for (const int64_t line_end = t + 16; t < line_end; t++) { \
                LOAD \
                ROWS(ACCUMULATE) \
            } \
        } \
    } \
    for (; t < t_end; t++) { \
        LOAD \
        ROWS(ACCUMULATE) \
    } \
    if (adds_earlier) { ROWS(ADD_EARLIER) } \
    if (scaled) { ROWS(SCALE) } \
    ROWS(STORE)

// The `count` rows of the register block from row r, and the next block's (to prefetch): rows past the
// end repeat the last row, so their stores rewrite it with the same values.
static inline void panel_block_rows(const float *a, int64_t a_stride, float *out, int64_t out_stride, int64_t rows,
                                    int64_t r, int count, const float **rows_a, const float **next_a, float **rows_out) {
    for (int i = 0; i < count; i++) {
        const int64_t row = r + i < rows ? r + i : rows - 1, next = r + count + i < rows ? r + count + i : rows - 1;
        rows_a[i] = a + row * a_stride;
        rows_out[i] = out + row * out_stride;
        next_a[i] = a + next * a_stride;
    }
}

#endif
