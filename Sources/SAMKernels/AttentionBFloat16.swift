import CBFloat16

extension Kernels {
    /// Whether `attention` at `precision` runs `attentionBFloat16` on this CPU.
    static func bfloat16AttentionRuns(_ precision: LinearPrecision) -> Bool {
        precision == .bfloat16 && bfloat16Available
    }

    /// Keys per step of `attentionBFloat16`'s running softmax: a block of rows' scores, their rounded
    /// weights and outputs stay in L2 (96 rows: 200 KB of scores), where whole rows of 28,736 scores
    /// (11 MB a block) went through memory five times.
    package static let bfloat16AttentionKeyBlock = 512

    /// The panel path's attention with both products in bfloat16 (CBFloat16: queries, keys, the softmax's
    /// weights and values rounded to bfloat16, sums in float32; softmax in float32): each (batch, head)'s
    /// keys and values packed once, then blocks of query rows in parallel, each over blocks of keys with a
    /// running softmax (the flash-attention order): per key block, scores = q kᵀ, the row's running max
    /// raised where the block exceeds it (earlier weights and the output scaled by exp(old - new)),
    /// weights exp(score - max) added to the row's sum and weights·v to the output; the output divided
    /// by the sum at the end. The queries are scaled before they are rounded (exact for a power-of-two
    /// scale, as 1/√256 is). SAM 2's memory attention spends most of a tracked frame in these two
    /// products (4,096 queries over up to 28,736 keys), which AVX512_BF16 and AMX-BF16 run at about
    /// twice float32's rate. Same layout contract as `attentionPanels`.
    static func attentionBFloat16(_ s: AttentionShape, q: UnsafePointer<Float>, qRowStride: Int,
                                  k: UnsafePointer<Float>, kRowStride: Int, v: UnsafePointer<Float>, vRowStride: Int,
                                  scale: Float, bias: UnsafePointer<Float>?, biasPerBatch: Bool,
                                  into out: UnsafeMutablePointer<Float>) {
        let (queryLength, keyLength, heads, headDim, valueDim) = (s.queryLength, s.keyLength, s.heads, s.headDim, s.valueHeadDim)
        let valueWidth = heads * valueDim
        let keyBlock = min(keyLength, bfloat16AttentionKeyBlock)
        // At most 128 rows (CBFloat16's row block), so a block's rounded rows fit `rows * pairs` of scratch.
        let preferredRows = min(96, attentionBlockRows(keyLength: keyBlock, headDim: headDim))
        let scoreStride = strideOffFourKilobytes(keyBlock)
        let pairsPerRow = Int(max(sam_bf16_scratch_count_rows(Int64(keyBlock), 1), sam_bf16_scratch_count_rows(Int64(headDim), 1)))
        // Per row: its scores, its rounded inputs (uint32 pairs, the size of a float), its scaled query,
        // its running max and sum.
        let scratchPerRow = scoreStride + pairsPerRow + headDim + 2
        for b in 0..<s.batch {
            for h in 0..<heads {
                let keys = bfloat16Panels(k + b * keyLength * kRowStride + h * s.kHeadStep, features: keyLength, inputs: headDim,
                                          featureStride: kRowStride, inputStride: 1)
                let values = bfloat16Panels(v + b * keyLength * vRowStride + h * s.vHeadStep, features: valueDim, inputs: keyLength,
                                            featureStride: 1, inputStride: vRowStride)
                let biasHead = biasPerBatch ? b * heads + h : h
                forEachAttentionBlock(batch: 1, heads: 1, queryLength: queryLength, scratchPerRow: scratchPerRow,
                                      preferredRows: preferredRows) { scratch, _, _, firstRow, rows in
                    let scores = scratch
                    let rounded = UnsafeMutableRawPointer(scratch + rows * scoreStride).assumingMemoryBound(to: UInt32.self)
                    let scaledQueries = scratch + rows * (scoreStride + pairsPerRow)
                    let runningMax = scaledQueries + rows * headDim, sums = runningMax + rows
                    let queries = q + (b * queryLength + firstRow) * qRowStride + h * s.qHeadStep
                    let output = out + (b * queryLength + firstRow) * valueWidth + h * valueDim
                    for r in 0..<rows {
                        for d in 0..<headDim { scaledQueries[r * headDim + d] = scale * queries[r * qRowStride + d] }
                        (output + r * valueWidth).initialize(repeating: 0, count: valueDim)
                        runningMax[r] = -.infinity
                        sums[r] = 0
                    }
                    for first in stride(from: 0, to: keyLength, by: keyBlock) {
                        let count = min(keyBlock, keyLength - first)
                        for r in 0..<rows { (scores + r * scoreStride).initialize(repeating: 0, count: count) }
                        keys.withUnsafeBufferPointer { panels in
                            let block = panels.baseAddress! + Int(sam_bf16_panel_count(Int64(first), Int64(headDim)))
                            sam_bf16_linear_accumulate(scaledQueries, Int64(rows), Int64(headDim), Int64(headDim), block,
                                                       Int64(count), scores, Int64(scoreStride), rounded)
                        }
                        for r in 0..<rows {
                            let row = scores + r * scoreStride
                            if let bias { addInPlace(row, bias + (biasHead * queryLength + firstRow + r) * keyLength + first, count: count) }
                            runningSoftmaxStep(row, count: count, runningMax: &runningMax[r], sum: &sums[r],
                                               output: output + r * valueWidth, outputCount: valueDim)
                        }
                        values.withUnsafeBufferPointer { panels in
                            sam_bf16_linear_accumulate_inputs(scores, Int64(rows), Int64(first), Int64(count), Int64(scoreStride),
                                                              panels.baseAddress!, Int64(keyLength), Int64(valueDim), output,
                                                              Int64(valueWidth), rounded)
                        }
                    }
                    for r in 0..<rows { scaleRow(output + r * valueWidth, count: valueDim, by: 1 / sums[r]) }
                }
            }
        }
    }

    /// `features` x `inputs` elements, (j, i) at source[j * featureStride + i * inputStride], in CBFloat16's panels.
    private static func bfloat16Panels(_ source: UnsafePointer<Float>, features: Int, inputs: Int, featureStride: Int,
                                       inputStride: Int) -> [UInt32] {
        let count = Int(sam_bf16_panel_count(Int64(features), Int64(inputs)))
        let groups = (features + 31) / 32, pairsPerGroup = count / max(1, groups)
        return [UInt32](unsafeUninitializedCapacity: count) { panels, initialized in
            let base = panels.baseAddress!
            // Groups of 32 features are packed apart, by every worker (28,736 keys of 256 in SAM 2's memory attention).
            parallelForChunks(groups) { range in
                let first = range.lowerBound * 32, features = min(features, range.upperBound * 32) - first
                sam_bf16_pack_strided(source + first * featureStride, Int64(features), Int64(inputs), Int64(featureStride),
                                      Int64(inputStride), base + range.lowerBound * pairsPerGroup)
            }
            initialized = count
        }
    }
}
