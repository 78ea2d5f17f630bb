import CVectorMath
import SAMBLAS

extension Kernels {
    /// Whether `relativePositionAttention`'s automatic choice takes the panel path: wherever linear
    /// layers do. `sambench attention --case relative` on 2 Zen 4 cores: ViT-B's global blocks 295
    /// against 350 ms for the BLAS bands; its 14x14 windows (one task per window and head) about even
    /// (23.9-25.1 against 24.6-25.0 ms over four runs), ViT-B's encoder 0.6-1% faster with them
    /// (alternating runs, 4.81-4.88 against 4.85-4.91 s).
    static var relativePositionPanelsPay: Bool {
        panelAttentionChosen
    }

    /// Grids of this many tokens or more split each head's rows between the workers
    /// (`relativePositionAttentionPanels`); smaller ones run one (window, head) per task
    /// (`relativePositionAttentionPanelsInWindows`), whose scores [tokens, tokens] stay in L2.
    static let relativePositionPanelsGlobalTokens = 1024

    /// `relativePositionAttention` on the panel product: for each (batch, head), the keys and values
    /// are packed once, the decomposed relative positions of every query computed once (rel_h and
    /// rel_w, one small product per query grid row and column: `TransposedRelativeTables`;
    /// `sambench attention --case relative --kernel panels`, Zen 5, 3 alternating rounds: ViT-B's
    /// global block 135.9–139.6 -> 133.6–135.3 ms, its 14x14 windows 12.9–13.0 -> 12.2–12.4 ms against
    /// a dot product per query and key), then blocks of query rows run in parallel:
    /// scores = scale * q kᵀ (panel product); exp(scores + rel_h + rel_w - max) in two passes over each
    /// row (`sam_relative_softmax_numerators_avx512`); out = those numerators times v (panel product),
    /// each output row then divided by its sum. The bands of the BLAS path pack the head's keys and
    /// values again for every band and go over each row of scores four times.
    /// qkv: [B, tokens, 3*H*D] with rows 3*H*D apart, all heads' queries, then keys, then values;
    /// out: [B, tokens, H*D], written in full.
    /// ref: segment_anything/modeling/image_encoder.py Attention.forward, add_decomposed_rel_pos
    static func relativePositionAttentionPanels(qkv: UnsafePointer<Float>, batch: Int, heads: Int, scale: Float,
                                                positions: RelativePositionTables, into out: UnsafeMutablePointer<Float>) {
        let (gridHeight, gridWidth, headDim) = (positions.gridHeight, positions.gridWidth, positions.headDim)
        let tokens = gridHeight * gridWidth, width = heads * headDim, rowStride = 3 * width
        let scoreStride = strideOffFourKilobytes(tokens)
        let preferredRows = attentionBlockRows(keyLength: tokens, headDim: headDim)
        let tables = TransposedRelativeTables(positions)
        defer { tables.deallocate() }
        // rel_h then rel_w of every query of one head, rows of tables.heightLanes and tables.widthLanes floats.
        let relative = UnsafeMutablePointer<Float>.allocate(capacity: tokens * (tables.heightLanes + tables.widthLanes))
        defer { relative.deallocate() }
        let relativeHeights = relative, relativeWidths = relative + tokens * tables.heightLanes
        for b in 0..<batch {
            for h in 0..<heads {
                let q = qkv + b * tokens * rowStride + h * headDim
                let (keys, values) = packedKeysAndValues(q: q, tokens: tokens, headDim: headDim, width: width)
                // rel_h by query grid rows, then rel_w by query grid columns: each group shares a table.
                parallelForChunks(gridHeight + gridWidth) { groups in
                    for group in groups {
                        tables.relativePositions(group: group, q: q, rowStride: rowStride,
                                                 relativeHeights: relativeHeights, relativeWidths: relativeWidths)
                    }
                }
                // A block's scratch: its rows of scores, then each row's inverse sum.
                forEachAttentionBlock(batch: 1, heads: 1, queryLength: tokens, scratchPerRow: scoreStride + 1,
                                      preferredRows: preferredRows) { scores, _, _, firstRow, rows in
                    relativeAttentionRows(q: q, rowStride: rowStride, keys: keys, values: values, scale: scale,
                                          relativeHeights: relativeHeights, relativeWidths: relativeWidths,
                                          tables: tables, firstRow: firstRow, rows: rows,
                                          scores: scores, scoreStride: scoreStride, softmaxScratch: nil,
                                          out: out + (b * tokens + firstRow) * width + h * headDim, outStride: width)
                }
            }
        }
    }

    /// `relativePositionAttentionPanels` on many small grids (SAM ViT's 14x14 windows): one task per
    /// (window, head), each packing its keys and values and running all its rows on one core. Splitting
    /// each head's 196 rows between the cores, as the global grid does, synchronised the workers twice
    /// per (window, head) and was slower than the BLAS bands.
    static func relativePositionAttentionPanelsInWindows(qkv: UnsafePointer<Float>, batch: Int, heads: Int, scale: Float,
                                                         positions: RelativePositionTables,
                                                         into out: UnsafeMutablePointer<Float>) {
        let (gridHeight, gridWidth, headDim) = (positions.gridHeight, positions.gridWidth, positions.headDim)
        let tokens = gridHeight * gridWidth, width = heads * headDim, rowStride = 3 * width
        let scoreStride = strideOffFourKilobytes(tokens)
        let tables = TransposedRelativeTables(positions)
        defer { tables.deallocate() }
        parallelForChunks(batch * heads) { tasks in
            // Scores with each row's inverse sum after them, rel_h and rel_w of every query, then one
            // row of the narrow softmax's scratch: in the same block, which every task reuses (a
            // row allocated per task was 1-2% slower, `sambench attention --case relative`).
            let scratch = UnsafeMutablePointer<Float>.allocate(
                capacity: tokens * (scoreStride + 2 + tables.heightLanes + tables.widthLanes) + 16)
            defer { scratch.deallocate() }
            let relativeHeights = scratch + tokens * (scoreStride + 1)
            let relativeWidths = relativeHeights + tokens * tables.heightLanes
            let softmaxScratch = relativeWidths + tokens * tables.widthLanes
            for task in tasks {
                let (b, h) = (task / heads, task % heads)
                let q = qkv + b * tokens * rowStride + h * headDim
                let (keys, values) = packedKeysAndValues(q: q, tokens: tokens, headDim: headDim, width: width)
                for group in 0..<(gridHeight + gridWidth) {
                    tables.relativePositions(group: group, q: q, rowStride: rowStride,
                                             relativeHeights: relativeHeights, relativeWidths: relativeWidths)
                }
                relativeAttentionRows(q: q, rowStride: rowStride, keys: keys, values: values, scale: scale,
                                      relativeHeights: relativeHeights, relativeWidths: relativeWidths,
                                      tables: tables, firstRow: 0, rows: tokens,
                                      scores: scratch, scoreStride: scoreStride, softmaxScratch: softmaxScratch,
                                      out: out + b * tokens * width + h * headDim, outStride: width)
            }
        }
    }

    /// One head's operands for the panel product, from its q|k|v rows (`q` at its queries, `width` =
    /// heads * headDim): keys as `tokens` features of `headDim` inputs, values as `headDim` features of
    /// `tokens` inputs.
    private static func packedKeysAndValues(q: UnsafePointer<Float>, tokens: Int, headDim: Int,
                                            width: Int) -> (keys: ProductPanels, values: ProductPanels) {
        let rowStride = 3 * width
        return (ProductPanels(features: tokens, inputs: headDim, source: q + width, featureStride: rowStride, inputStride: 1),
                ProductPanels(features: headDim, inputs: tokens, source: q + 2 * width, featureStride: 1, inputStride: rowStride))
    }

    /// Query rows firstRow ..< firstRow + rows of one (batch, head): scores = scale * q kᵀ (panel
    /// product), exp(scores + rel_h + rel_w - max) in two passes over each row, those numerators
    /// times v (panel product), each output row divided by its sum. `scores` holds rows * scoreStride
    /// floats, then one per row for its inverse sum. Grids narrower than 16 keys take `softmaxScratch`
    /// (tokens + 16 floats) for `sam_relative_softmax_numerators_narrow_avx512`, or allocate it.
    private static func relativeAttentionRows(q: UnsafePointer<Float>, rowStride: Int, keys: ProductPanels, values: ProductPanels,
                                              scale: Float, relativeHeights: UnsafePointer<Float>,
                                              relativeWidths: UnsafePointer<Float>, tables: TransposedRelativeTables,
                                              firstRow: Int, rows: Int, scores: UnsafeMutablePointer<Float>, scoreStride: Int,
                                              softmaxScratch: UnsafeMutablePointer<Float>?, out: UnsafeMutablePointer<Float>, outStride: Int) {
        let (gridHeight, gridWidth, headDim) = (tables.gridHeight, tables.gridWidth, tables.headDim)
        let inverseSums = scores + rows * scoreStride
        let narrowScratch = gridWidth < 16 ? softmaxScratch ?? .allocate(capacity: gridHeight * gridWidth + 16) : nil
        defer { if softmaxScratch == nil { narrowScratch?.deallocate() } }
        keys.product(x: q + firstRow * rowStride, xStride: rowStride, rows: rows, scale: scale, bias: nil,
                     into: scores, outStride: scoreStride)
        for r in 0..<rows {
            let query = firstRow + r
            let (row, heights, widths) = (scores + r * scoreStride, relativeHeights + query * tables.heightLanes,
                                          relativeWidths + query * tables.widthLanes)
            if let narrowScratch {
                inverseSums[r] = sam_relative_softmax_numerators_narrow_avx512(row, heights, widths, Int64(gridHeight),
                                                                               Int64(gridWidth), narrowScratch)
            } else {
                inverseSums[r] = sam_relative_softmax_numerators_avx512(row, heights, widths, Int64(gridHeight), Int64(gridWidth))
            }
        }
        values.product(x: scores, xStride: scoreStride, rows: rows, bias: nil, into: out, outStride: outStride)
        for r in 0..<rows {
            let row = out + r * outStride, inverseSum = inverseSums[r]
            for i in 0..<headDim { row[i] *= inverseSum }
        }
    }
}
