import CVectorMath
import SAMBLAS

extension Kernels {
    /// Whether `relativePositionAttention`'s automatic choice takes the panel path: wherever linear
    /// layers do. `sambench attention --case relative` on 2 Zen 4 cores: ViT-B's global blocks 295
    /// against 350 ms for the BLAS bands; its 14x14 windows (one task per window and head) about even
    /// (23.9-25.1 against 24.6-25.0 ms over four runs), ViT-B's encoder 0.6-1% faster with them
    /// (alternating runs, 4.81-4.88 against 4.85-4.91 s).
    static var relativePositionPanelsPay: Bool {
        float32LinearKernel == .panels
    }

    /// Grids of this many tokens or more split each head's rows between the workers
    /// (`relativePositionAttentionPanels`); smaller ones run one (window, head) per task
    /// (`relativePositionAttentionPanelsInWindows`), whose scores [tokens, tokens] stay in L2.
    static let relativePositionPanelsGlobalTokens = 1024

    /// `relativePositionAttention` on the panel product: for each (batch, head), the keys and values
    /// are packed once, the decomposed relative positions of every query computed once (rel_h
    /// [tokens, gridHeight], rel_w [tokens, gridWidth]), then blocks of query rows run in parallel:
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
        // rel_h then rel_w of every query of one head: tokens * (gridHeight + gridWidth) floats.
        let relative = UnsafeMutablePointer<Float>.allocate(capacity: tokens * (gridHeight + gridWidth))
        defer { relative.deallocate() }
        let relativeHeights = relative, relativeWidths = relative + tokens * gridHeight
        positions.heights.data.withUnsafeBufferPointer { heightBuffer in
        positions.widths.data.withUnsafeBufferPointer { widthBuffer in
            let (heightTable, widthTable) = (heightBuffer.baseAddress!, widthBuffer.baseAddress!)
            for b in 0..<batch {
                for h in 0..<heads {
                    let q = qkv + b * tokens * rowStride + h * headDim
                    let (keys, values) = packedKeysAndValues(q: q, tokens: tokens, headDim: headDim, width: width)
                    parallelForChunks(gridHeight) { gridRows in
                        relativePositions(ofGridRows: gridRows, q: q, rowStride: rowStride, positions: positions,
                                          heightTable: heightTable, widthTable: widthTable,
                                          relativeHeights: relativeHeights, relativeWidths: relativeWidths)
                    }
                    // A block's scratch: its rows of scores, then each row's inverse sum.
                    forEachAttentionBlock(batch: 1, heads: 1, queryLength: tokens, scratchPerRow: scoreStride + 1,
                                          preferredRows: preferredRows) { scores, _, _, firstRow, rows in
                        relativeAttentionRows(q: q, rowStride: rowStride, keys: keys, values: values, scale: scale,
                                              relativeHeights: relativeHeights, relativeWidths: relativeWidths,
                                              positions: positions, firstRow: firstRow, rows: rows,
                                              scores: scores, scoreStride: scoreStride, softmaxScratch: nil,
                                              out: out + (b * tokens + firstRow) * width + h * headDim, outStride: width)
                    }
                }
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
        positions.heights.data.withUnsafeBufferPointer { heightBuffer in
        positions.widths.data.withUnsafeBufferPointer { widthBuffer in
            let (heightTable, widthTable) = (heightBuffer.baseAddress!, widthBuffer.baseAddress!)
            parallelForChunks(batch * heads) { tasks in
                // Scores with each row's inverse sum after them, rel_h and rel_w of every query, then one
                // row of the narrow softmax's scratch: in the same block, which every task reuses (a
                // row allocated per task was 1-2% slower, `sambench attention --case relative`).
                let scratch = UnsafeMutablePointer<Float>.allocate(capacity: tokens * (scoreStride + 2 + gridHeight + gridWidth) + 16)
                defer { scratch.deallocate() }
                let relativeHeights = scratch + tokens * (scoreStride + 1), relativeWidths = relativeHeights + tokens * gridHeight
                let softmaxScratch = relativeWidths + tokens * gridWidth
                for task in tasks {
                    let (b, h) = (task / heads, task % heads)
                    let q = qkv + b * tokens * rowStride + h * headDim
                    let (keys, values) = packedKeysAndValues(q: q, tokens: tokens, headDim: headDim, width: width)
                    relativePositions(ofGridRows: 0..<gridHeight, q: q, rowStride: rowStride, positions: positions,
                                      heightTable: heightTable, widthTable: widthTable,
                                      relativeHeights: relativeHeights, relativeWidths: relativeWidths)
                    relativeAttentionRows(q: q, rowStride: rowStride, keys: keys, values: values, scale: scale,
                                          relativeHeights: relativeHeights, relativeWidths: relativeWidths,
                                          positions: positions, firstRow: 0, rows: tokens,
                                          scores: scratch, scoreStride: scoreStride, softmaxScratch: softmaxScratch,
                                          out: out + b * tokens * width + h * headDim, outStride: width)
                }
            }
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

    /// rel_h and rel_w (`relativePositions`) of the queries of grid rows `gridRows` of one head, into
    /// `relativeHeights` [tokens, gridHeight] and `relativeWidths` [tokens, gridWidth] at those queries.
    private static func relativePositions(ofGridRows gridRows: Range<Int>, q: UnsafePointer<Float>, rowStride: Int,
                                          positions: RelativePositionTables, heightTable: UnsafePointer<Float>,
                                          widthTable: UnsafePointer<Float>, relativeHeights: UnsafeMutablePointer<Float>,
                                          relativeWidths: UnsafeMutablePointer<Float>) {
        let (gridHeight, gridWidth) = (positions.gridHeight, positions.gridWidth)
        for gridRow in gridRows {
            relativePositions(q: q + gridRow * gridWidth * rowStride, qStride: rowStride, queryRow: gridRow,
                              tables: positions, heightTable: heightTable, widthTable: widthTable,
                              heights: relativeHeights + gridRow * gridWidth * gridHeight,
                              widths: relativeWidths + gridRow * gridWidth * gridWidth)
        }
    }

    /// Query rows firstRow ..< firstRow + rows of one (batch, head): scores = scale * q kᵀ (panel
    /// product), exp(scores + rel_h + rel_w - max) in two passes over each row, those numerators
    /// times v (panel product), each output row divided by its sum. `scores` holds rows * scoreStride
    /// floats, then one per row for its inverse sum. Grids narrower than 16 keys take `softmaxScratch`
    /// (tokens + 16 floats) for `sam_relative_softmax_numerators_narrow_avx512`, or allocate it.
    private static func relativeAttentionRows(q: UnsafePointer<Float>, rowStride: Int, keys: ProductPanels, values: ProductPanels,
                                              scale: Float, relativeHeights: UnsafePointer<Float>,
                                              relativeWidths: UnsafePointer<Float>, positions: RelativePositionTables,
                                              firstRow: Int, rows: Int, scores: UnsafeMutablePointer<Float>, scoreStride: Int,
                                              softmaxScratch: UnsafeMutablePointer<Float>?, out: UnsafeMutablePointer<Float>, outStride: Int) {
        let (gridHeight, gridWidth, headDim) = (positions.gridHeight, positions.gridWidth, positions.headDim)
        let inverseSums = scores + rows * scoreStride
        let narrowScratch = gridWidth < 16 ? softmaxScratch ?? .allocate(capacity: gridHeight * gridWidth + 16) : nil
        defer { if softmaxScratch == nil { narrowScratch?.deallocate() } }
        keys.product(x: q + firstRow * rowStride, xStride: rowStride, rows: rows, scale: scale, bias: nil,
                     into: scores, outStride: scoreStride)
        for r in 0..<rows {
            let query = firstRow + r
            let (row, heights, widths) = (scores + r * scoreStride, relativeHeights + query * gridHeight,
                                          relativeWidths + query * gridWidth)
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
