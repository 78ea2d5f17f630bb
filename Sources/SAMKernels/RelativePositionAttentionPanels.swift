import CVectorMath
import SAMBLAS

extension Kernels {
    /// Whether `relativePositionAttention`'s automatic choice takes the panel path: SAM ViT's global
    /// blocks (a 64x64 grid, 4096 keys). On its 14x14 windows the bands are faster (`sambench
    /// attention --case relative`: 30 against 48 ms on 2 cores, 25 windows of 12 heads).
    static func relativePositionPanelsPay(tokens: Int) -> Bool {
        float32LinearKernel == .panels && tokens >= 1024
    }

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
                    let keys = ProductPanels(features: tokens, inputs: headDim, source: q + width,
                                             featureStride: rowStride, inputStride: 1)
                    let values = ProductPanels(features: headDim, inputs: tokens, source: q + 2 * width,
                                               featureStride: 1, inputStride: rowStride)
                    parallelForChunks(gridHeight) { gridRows in
                        for gridRow in gridRows {
                            relativePositions(q: q + gridRow * gridWidth * rowStride, qStride: rowStride, queryRow: gridRow,
                                              tables: positions, heightTable: heightTable, widthTable: widthTable,
                                              heights: relativeHeights + gridRow * gridWidth * gridHeight,
                                              widths: relativeWidths + gridRow * gridWidth * gridWidth)
                        }
                    }
                    // A block's scratch: its rows of scores, then each row's inverse sum.
                    forEachAttentionBlock(batch: 1, heads: 1, queryLength: tokens, scratchPerRow: scoreStride + 1,
                                          preferredRows: preferredRows) { scores, _, _, firstRow, rows in
                        let inverseSums = scores + rows * scoreStride
                        keys.product(x: q + firstRow * rowStride, xStride: rowStride, rows: rows, scale: scale, bias: nil,
                                     into: scores, outStride: scoreStride)
                        for r in 0..<rows {
                            let query = firstRow + r
                            inverseSums[r] = sam_relative_softmax_numerators_avx512(
                                scores + r * scoreStride, relativeHeights + query * gridHeight, relativeWidths + query * gridWidth,
                                Int64(gridHeight), Int64(gridWidth))
                        }
                        let outRows = out + (b * tokens + firstRow) * width + h * headDim
                        values.product(x: scores, xStride: scoreStride, rows: rows, bias: nil, into: outRows, outStride: width)
                        for r in 0..<rows {
                            let row = outRows + r * width, inverseSum = inverseSums[r]
                            for i in 0..<headDim { row[i] *= inverseSum }
                        }
                    }
                }
            }
        }
        }
    }
}
