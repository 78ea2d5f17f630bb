extension Kernels {
    /// Query rows per block of the panel path. Each block streams all of its head's key panels once.
    /// While they fit in a 2 MB L2, blocks are sized so their scores stay within ~512 KB (L2) in whole
    /// twelve-row register blocks; beyond that the panels come from L3 or memory for every block, so
    /// 96 rows share each pass (long keys walk in chunks instead, `attentionPanelsByKeyChunks`: this
    /// holds for wide heads over at most 1,024 keys). Rows per block change no result.
    static func attentionBlockRows(keyLength: Int, headDim: Int) -> Int {
        keyLength * headDim * MemoryLayout<Float>.size > 2 << 20 ? 96 : max(12, 131_072 / keyLength / 12 * 12)
    }

    /// Whether `attention`'s automatic choice takes the panel path: wide heads over many keys
    /// (Hiera's global blocks, 96-dim heads over 4096 tokens), on CPUs running the panel product.
    static func panelAttentionPays(_ s: AttentionShape) -> Bool {
        panelAttentionChosen && max(s.headDim, s.valueHeadDim) > 64 && s.keyLength >= 1024
    }

    /// The panel path: each (batch, head)'s keys and values packed once (CVectorMath's panels), then
    /// its blocks of query rows in parallel (`forEachAttentionBlock` on the one head), scores =
    /// scale * q kᵀ and out = softmax(scores) v as two panel products. The BLAS path re-packs both
    /// operands for every block (1.5 MB each per head in Hiera's global blocks). One head's panels
    /// at a time: packing every head first measured the same time and 25 MB more peak memory on
    /// SAM 2.1 tiny. Same layout contract as `attentionBLAS`; the output is written in full.
    static func attentionPanels(_ s: AttentionShape, q: UnsafePointer<Float>, qRowStride: Int,
                                k: UnsafePointer<Float>, kRowStride: Int, v: UnsafePointer<Float>, vRowStride: Int,
                                scale: Float, bias: UnsafePointer<Float>?, biasPerBatch: Bool,
                                into out: UnsafeMutablePointer<Float>) {
        if attentionByKeyChunksPays(s) {
            attentionPanelsByKeyChunks(s, q: q, qRowStride: qRowStride, k: k, kRowStride: kRowStride, v: v, vRowStride: vRowStride,
                                       scale: scale, bias: bias, biasPerBatch: biasPerBatch, into: out)
            return
        }
        let (queryLength, keyLength, heads) = (s.queryLength, s.keyLength, s.heads)
        let valueWidth = heads * s.valueHeadDim
        // The value product broadcasts from twelve score rows at once; rows a multiple of 4 KB apart (4096
        // keys) share one L1 set and evict each other, so the stride steps off such a multiple
        // (`sambench attention --case global --threads 1`: 253-255 ms against 272 unpadded).
        let preferredRows = attentionBlockRows(keyLength: keyLength, headDim: s.headDim)
        let scoreStride = strideOffFourKilobytes(keyLength)
        for b in 0..<s.batch {
            for h in 0..<heads {
                let keys = ProductPanels(features: keyLength, inputs: s.headDim, source: k + b * keyLength * kRowStride + h * s.kHeadStep,
                                         featureStride: kRowStride, inputStride: 1)
                let values = ProductPanels(features: s.valueHeadDim, inputs: keyLength,
                                           source: v + b * keyLength * vRowStride + h * s.vHeadStep,
                                           featureStride: 1, inputStride: vRowStride)
                let biasHead = biasPerBatch ? b * heads + h : h
                forEachAttentionBlock(batch: 1, heads: 1, queryLength: queryLength, scratchPerRow: scoreStride,
                                      preferredRows: preferredRows) { scores, _, _, firstRow, rows in
                    keys.product(x: q + (b * queryLength + firstRow) * qRowStride + h * s.qHeadStep, xStride: qRowStride,
                                 rows: rows, scale: scale, bias: nil, into: scores, outStride: scoreStride)
                    for r in 0..<rows {
                        let biasRow = bias.map { $0 + (biasHead * queryLength + firstRow + r) * keyLength }
                        softmaxRow(scores + r * scoreStride, count: keyLength, adding: biasRow)
                    }
                    values.product(x: scores, xStride: scoreStride, rows: rows, bias: nil,
                                   into: out + (b * queryLength + firstRow) * valueWidth + h * s.valueHeadDim,
                                   outStride: valueWidth)
                }
            }
        }
    }
}
