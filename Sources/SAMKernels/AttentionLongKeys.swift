import SAMTensor

extension Kernels {
    /// `attention` for long key sets (the decoder's tokens attending to 4096 image tokens):
    /// there every BLAS call per (head, block of query rows) re-packs all of the head's keys
    /// and values, and the k = 16 score product is mostly packing. Here keys are transposed
    /// once per head to [D, Lk] (row stride off 4 KB multiples, so the D rows read together do
    /// not share an L1 set) and values packed to [Lk, Dv]; each task then computes its scores
    /// four query rows by eight keys at a time, takes the softmax in place and accumulates the
    /// values the same way, straight into the merged-heads output. (Measured on the drop's
    /// 100-point prompt: ~7 ms against ~10 ms per token-to-image attention through the BLAS;
    /// for short key sets the BLAS path was as fast or faster, so it stays there.)
    static func attentionLongKeys(q: FloatTensor, k: FloatTensor, v: FloatTensor, heads: Int, scale: Float,
                                  bias: FloatTensor?, biasPerBatch: Bool) -> FloatTensor {
        let batch = q.shape[0], queryLength = q.shape[1], keyWidth = q.shape[2]
        let keyLength = k.shape[1], valueWidth = v.shape[2]
        let headDim = keyWidth / heads, valueHeadDim = valueWidth / heads
        let outCount = batch * queryLength * valueWidth

        // Transposed keys get a row stride that is not a multiple of 4 KB: with 4096 keys the
        // D rows read together would otherwise all map to the same L1 cache set.
        let keyStride = (keyLength + 7) / 8 * 8 + 8
        let transposedKeys = transposeKeys(k, heads: heads, stride: keyStride)
        // Each head's values contiguous [Lk, Dv], not Dv floats every H*Dv.
        let packedValues = packValues(v, heads: heads)

        let data = [Float](unsafeUninitializedCapacity: outCount) { outBuffer, initializedCount in
            q.data.withUnsafeBufferPointer { qBuffer in
            transposedKeys.withUnsafeBufferPointer { ktBuffer in
            packedValues.withUnsafeBufferPointer { vBuffer in
            (bias?.data ?? []).withUnsafeBufferPointer { biasBuffer in
                let qBase = qBuffer.baseAddress!, ktBase = ktBuffer.baseAddress!, vBase = vBuffer.baseAddress!
                // An empty array may still have a base address, so decide by `bias` itself.
                let biasBase = bias == nil ? nil : biasBuffer.baseAddress, outBase = outBuffer.baseAddress!
                // Blocks of query rows keep a task's scores within ~256 KB (L2).
                forEachAttentionBlock(batch: batch, heads: heads, queryLength: queryLength, keyLength: keyLength,
                                      preferredRows: max(4, 65_536 / keyLength)) { scores, b, h, firstRow, rows in
                    let biasHead = biasPerBatch ? b * heads + h : h
                    // scores [rows, Lk] = scale * q_bh[rows, D] * k_bhᵀ (+ bias), then softmax
                    attentionScores(q: qBase + (b * queryLength + firstRow) * keyWidth + h * headDim, qStride: keyWidth,
                                    rows: rows, keysT: ktBase + (b * heads + h) * headDim * keyStride, keyStride: keyStride,
                                    depth: headDim, keyLength: keyLength, scale: scale,
                                    bias: biasBase.map { $0 + (biasHead * queryLength + firstRow) * keyLength },
                                    into: scores)
                    for r in 0..<rows { softmaxRow(scores + r * keyLength, count: keyLength) }
                    // out_bh[rows, Dv] = scores * v_bh[Lk, Dv], straight into the merged layout
                    attentionValues(scores, rows: rows, keyLength: keyLength,
                                    values: vBase + (b * heads + h) * keyLength * valueHeadDim, valueStride: valueHeadDim,
                                    width: valueHeadDim,
                                    into: outBase + (b * queryLength + firstRow) * valueWidth + h * valueHeadDim,
                                    outStride: valueWidth)
                }
            }
            }
            }
            }
            initializedCount = outCount
        }
        return FloatTensor(shape: [batch, queryLength, valueWidth], data: data)
    }

    /// k [B, Lk, H*D] -> [B, H, D, stride]: each head's keys with the key index contiguous (rows
    /// `stride` >= Lk apart), so a score row is a sum of D scaled key rows.
    private static func transposeKeys(_ k: FloatTensor, heads: Int, stride: Int) -> [Float] {
        let batch = k.shape[0], keyLength = k.shape[1], width = k.shape[2], depth = width / heads
        let count = batch * heads * depth * stride
        return [Float](unsafeUninitializedCapacity: count) { buffer, initializedCount in
            k.data.withUnsafeBufferPointer { source in
                let from = source.baseAddress!, to = buffer.baseAddress!
                parallelFor(batch * heads) { pair in
                    let b = pair / heads, h = pair % heads
                    let head = to + pair * depth * stride
                    for j in 0..<keyLength {
                        let row = from + (b * keyLength + j) * width + h * depth
                        for d in 0..<depth { (head + d * stride + j).initialize(to: row[d]) }
                    }
                    // The padding is never read; initialise it anyway.
                    for d in 0..<depth { (head + d * stride + keyLength).initialize(repeating: 0, count: stride - keyLength) }
                }
            }
            initializedCount = count
        }
    }

    /// v [B, Lk, H*Dv] -> [B, H, Lk, Dv].
    private static func packValues(_ v: FloatTensor, heads: Int) -> [Float] {
        let batch = v.shape[0], keyLength = v.shape[1], width = v.shape[2], valueDim = width / heads
        return [Float](unsafeUninitializedCapacity: v.count) { buffer, initializedCount in
            v.data.withUnsafeBufferPointer { source in
                let from = source.baseAddress!, to = buffer.baseAddress!
                parallelFor(batch * heads) { pair in
                    let b = pair / heads, h = pair % heads
                    let head = to + pair * keyLength * valueDim
                    for j in 0..<keyLength {
                        (head + j * valueDim).initialize(from: from + (b * keyLength + j) * width + h * valueDim, count: valueDim)
                    }
                }
            }
            initializedCount = v.count
        }
    }

    /// scores[r, j] = scale * Σ_d q[r, d] * keysT[d, j] (+ bias[r, j], rows of keysT `keyStride` apart) for r < rows, j < keyLength;
    /// four query rows by eight keys per step, so each loaded key vector feeds four rows.
    @inline(__always)
    private static func attentionScores(q: UnsafePointer<Float>, qStride: Int, rows: Int, keysT: UnsafePointer<Float>,
                                        keyStride: Int, depth: Int, keyLength: Int, scale: Float, bias: UnsafePointer<Float>?,
                                        into scores: UnsafeMutablePointer<Float>) {
        let vectorEnd = keyLength & ~7
        var r = 0
        while r < rows {
            let rowCount = min(4, rows - r)
            // Rows past the block's end repeat its last row (computed, never stored).
            let q0 = q + r * qStride
            let q1 = q + min(r + 1, rows - 1) * qStride
            let q2 = q + min(r + 2, rows - 1) * qStride
            let q3 = q + min(r + 3, rows - 1) * qStride
            var j = 0
            while j < vectorEnd {
                var a0 = SIMD8<Float>(repeating: 0), a1 = a0, a2 = a0, a3 = a0
                for d in 0..<depth {
                    let key = keysT.load8(at: d * keyStride + j)
                    a0 = multiplyAdd(q0[d], key, a0)
                    a1 = multiplyAdd(q1[d], key, a1)
                    a2 = multiplyAdd(q2[d], key, a2)
                    a3 = multiplyAdd(q3[d], key, a3)
                }
                let accumulators = (a0, a1, a2, a3)
                for i in 0..<rowCount {
                    let a = i == 0 ? accumulators.0 : i == 1 ? accumulators.1 : i == 2 ? accumulators.2 : accumulators.3
                    var s = scale * a
                    if let bias { s += bias.load8(at: (r + i) * keyLength + j) }
                    scores.store8(s, at: (r + i) * keyLength + j)
                }
                j += 8
            }
            for i in 0..<rowCount {
                let row = q + (r + i) * qStride
                for jj in vectorEnd..<keyLength {
                    var sum: Float = 0
                    for d in 0..<depth { sum += row[d] * keysT[d * keyStride + jj] }
                    var s = scale * sum
                    if let bias { s += bias[(r + i) * keyLength + jj] }
                    scores[(r + i) * keyLength + jj] = s
                }
            }
            r += 4
        }
    }

    /// out[r, e] = Σ_j p[r, j] * values[j, e] for r < rows, e < width (rows of `out` and
    /// `values` are `outStride` / `valueStride` apart); four rows by eight values per step.
    @inline(__always)
    private static func attentionValues(_ p: UnsafeMutablePointer<Float>, rows: Int, keyLength: Int,
                                        values: UnsafePointer<Float>, valueStride: Int, width: Int,
                                        into out: UnsafeMutablePointer<Float>, outStride: Int) {
        let vectorEnd = width & ~7
        var r = 0
        while r < rows {
            let rowCount = min(4, rows - r)
            let p0 = p + r * keyLength
            let p1 = p + min(r + 1, rows - 1) * keyLength
            let p2 = p + min(r + 2, rows - 1) * keyLength
            let p3 = p + min(r + 3, rows - 1) * keyLength
            var e = 0
            while e < vectorEnd {
                var a0 = SIMD8<Float>(repeating: 0), a1 = a0, a2 = a0, a3 = a0
                for j in 0..<keyLength {
                    let value = values.load8(at: j * valueStride + e)
                    a0 = multiplyAdd(p0[j], value, a0)
                    a1 = multiplyAdd(p1[j], value, a1)
                    a2 = multiplyAdd(p2[j], value, a2)
                    a3 = multiplyAdd(p3[j], value, a3)
                }
                let accumulators = (a0, a1, a2, a3)
                for i in 0..<rowCount {
                    let a = i == 0 ? accumulators.0 : i == 1 ? accumulators.1 : i == 2 ? accumulators.2 : accumulators.3
                    (out + (r + i) * outStride).store8(a, at: e)
                }
                e += 8
            }
            for i in 0..<rowCount {
                let row = p + (r + i) * keyLength
                for ee in vectorEnd..<width {
                    var sum: Float = 0
                    for j in 0..<keyLength { sum += row[j] * values[j * valueStride + ee] }
                    out[(r + i) * outStride + ee] = sum
                }
            }
            r += 4
        }
    }
}
