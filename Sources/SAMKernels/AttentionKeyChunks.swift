extension Kernels {
    /// Keys per chunk of `attentionPanelsByKeyChunks` (sixteen key panels), and query rows per block:
    /// a block's scores for one chunk are 400 KB, in L2, and every key comes from memory once per 192
    /// rows. `sambench attention --case "SAM 2 memory" --runs 5` (Zen 5, 2 threads, medians): the
    /// cross-attention over 7 memories with 64-wide values took 181–184 ms in chunks of 512 with blocks
    /// of 192 rows, 182–189 with 256 x 384, 199–204 with 128 x 768, 188–193 with 512 x 96; whole score
    /// rows in blocks of 96 (`attentionPanels`, the two builds alternated over six rounds) 190–193 ms
    /// against 182–185 in chunks (one round 196), with 256-wide values 300–302 against 282–284.
    static let attentionKeyChunk = 512, attentionKeyChunkRows = 192

    /// Whether the panel path walks the keys in chunks: when a block's full score rows would not stay
    /// in L2 (SAM 2's memory attention: 96 rows of 28,736 keys are 11 MB of scores, written, rescaled
    /// and read again from memory).
    static func attentionByKeyChunksPays(_ s: AttentionShape) -> Bool {
        s.keyLength * s.headDim * MemoryLayout<Float>.size > 2 << 20 && s.keyLength > 2 * attentionKeyChunk
    }

    /// The panel path over keys in chunks, with the softmax carried from chunk to chunk (as
    /// FlashAttention does): per block of query rows and per chunk of keys, scores = scale * q kᵀ
    /// (+ bias), each row's running maximum m raised to the chunk's, the scores turned into
    /// exp(score - m), the row's sum and output so far rescaled by exp(m_before - m), and the chunk's
    /// exp(scores) v added to the output; at the end each output row is divided by its sum. The
    /// scores never leave L2. The same function as `attentionPanels` with the sums associated
    /// differently (rounding only). Same layout contract; the output is written in full.
    /// ref: sam2/modeling/sam/transformer.py RoPEAttention.forward (F.scaled_dot_product_attention)
    static func attentionPanelsByKeyChunks(_ s: AttentionShape, q: UnsafePointer<Float>, qRowStride: Int,
                                           k: UnsafePointer<Float>, kRowStride: Int, v: UnsafePointer<Float>, vRowStride: Int,
                                           scale: Float, bias: UnsafePointer<Float>?, biasPerBatch: Bool,
                                           into out: UnsafeMutablePointer<Float>,
                                           chunk: Int = attentionKeyChunk, preferredRows: Int = attentionKeyChunkRows) {
        precondition(chunk > 0 && chunk % 32 == 0, "attention by key chunks: chunk \(chunk) is not whole panels of 32 keys")
        let (queryLength, keyLength, heads, valueHeadDim) = (s.queryLength, s.keyLength, s.heads, s.valueHeadDim)
        let valueWidth = heads * valueHeadDim
        let chunkStarts = Array(stride(from: 0, to: keyLength, by: chunk))
        // Per row of a block: a chunk's scores, its rows' part of the output so far and of this chunk's.
        let scoreStride = chunk + 16
        let scratchPerRow = scoreStride + 2 * valueHeadDim + 2
        for b in 0..<s.batch {
            for h in 0..<heads {
                let keys = ProductPanels(features: keyLength, inputs: s.headDim, source: k + b * keyLength * kRowStride + h * s.kHeadStep,
                                         featureStride: kRowStride, inputStride: 1)
                // Each chunk's values packed on their own: a panel product's inputs start at its panels' first row.
                var values = [ProductPanels?](repeating: nil, count: chunkStarts.count)
                values.withUnsafeMutableBufferPointer { slots in
                    let slots = slots.baseAddress!
                    parallelFor(chunkStarts.count) { c in
                        let start = chunkStarts[c]
                        slots[c] = ProductPanels(features: valueHeadDim, inputs: min(chunk, keyLength - start),
                                                 source: v + (b * keyLength + start) * vRowStride + h * s.vHeadStep,
                                                 featureStride: 1, inputStride: vRowStride)
                    }
                }
                let biasHead = biasPerBatch ? b * heads + h : h
                forEachAttentionBlock(batch: 1, heads: 1, queryLength: queryLength, scratchPerRow: scratchPerRow,
                                      preferredRows: preferredRows) { scratch, _, _, firstRow, rows in
                    let scores = scratch
                    let sums = scratch + rows * scoreStride, maxima = sums + rows
                    let output = maxima + rows, chunkOutput = output + rows * valueHeadDim
                    let queries = q + (b * queryLength + firstRow) * qRowStride + h * s.qHeadStep
                    output.initialize(repeating: 0, count: rows * valueHeadDim)
                    maxima.initialize(repeating: -.infinity, count: rows)
                    sums.initialize(repeating: 0, count: rows)
                    for (c, start) in chunkStarts.enumerated() {
                        let width = min(chunk, keyLength - start)
                        // Score column j of this chunk is key start + j: the product writes at the key's index.
                        keys.product(x: queries, xStride: qRowStride, rows: rows, scale: scale, bias: nil,
                                     into: scores - start, outStride: scoreStride,
                                     panels: start / 32..<(start + width + 31) / 32)
                        for r in 0..<rows {
                            let row = scores + r * scoreStride
                            if let bias { addInPlace(row, bias + (biasHead * queryLength + firstRow + r) * keyLength + start, count: width) }
                            runningSoftmaxStep(row, count: width, runningMax: &maxima[r], sum: &sums[r],
                                               output: output + r * valueHeadDim, outputCount: valueHeadDim)
                        }
                        values[c]!.product(x: scores, xStride: scoreStride, rows: rows, bias: nil,
                                           into: chunkOutput, outStride: valueHeadDim)
                        addInPlace(output, UnsafePointer(chunkOutput), count: rows * valueHeadDim)
                    }
                    for r in 0..<rows {
                        let target = out + (b * queryLength + firstRow + r) * valueWidth + h * valueHeadDim
                        let inverse = 1 / sums[r]
                        for d in 0..<valueHeadDim { target[d] = output[r * valueHeadDim + d] * inverse }
                    }
                }
            }
        }
    }
}
