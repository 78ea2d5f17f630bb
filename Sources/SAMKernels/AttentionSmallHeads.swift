import CVectorMath

extension Kernels {
    /// The attention path for narrow heads (D, Dv <= 64) with one long side (the decoder's
    /// 4096 image tokens, as keys or as queries), where BLAS calls per (head, block of query
    /// rows) are mostly packing: with D = 16 each score is a 16-term dot product, too little
    /// work to amortise packing its operands.
    ///
    /// Keys are transposed once per head to [D, stride] (zero-padded to whole vectors, the row
    /// stride off 4 KB multiples so the D rows read together do not share an L1 set), unless the
    /// caller projected them that way (`TransposedKeys`). Each task
    /// (a head and a block of query rows) computes its scores six query rows by sixteen keys at
    /// a time, exponentiates them in place, and accumulates the values (packed per head) the
    /// same way (`scaledRowsProduct`); the softmax's division by the row sum is applied to those
    /// sums as they are stored, straight into the merged-heads output. Row and column layout as
    /// `attentionBLAS`.
    static func attentionSmallHeads(_ s: AttentionShape, q: UnsafePointer<Float>, qRowStride: Int,
                                    k: UnsafePointer<Float>, kRowStride: Int, v: UnsafePointer<Float>, vRowStride: Int,
                                    scale: Float, bias: UnsafePointer<Float>?, biasPerBatch: Bool,
                                    into out: UnsafeMutablePointer<Float>) {
        let (batch, keyLength, heads, headDim) = (s.batch, s.keyLength, s.heads, s.headDim)
        let keyStride = transposedKeyStride(keyLength)
        let keysT = UnsafeMutablePointer<Float>.allocate(capacity: batch * heads * headDim * keyStride)
        defer { keysT.deallocate() }
        parallelFor(batch * heads) { pair in
            let b = pair / heads, h = pair % heads
            transposeKeys(k + b * keyLength * kRowStride + h * s.kHeadStep, rowStride: kRowStride, keyLength: keyLength,
                          headDim: headDim, into: keysT + pair * headDim * keyStride, stride: keyStride)
        }
        attentionSmallHeads(s, q: q, qRowStride: qRowStride, keysT: keysT, keyStride: keyStride, v: v, vRowStride: vRowStride,
                            scale: scale, bias: bias, biasPerBatch: biasPerBatch, into: out)
    }

    /// `keyLength` rounded up to whole vectors of eight: the row length of the scores
    /// `softmaxNumerators` takes (the padding is masked before the softmax).
    static func paddedKeyCount(_ keyLength: Int) -> Int {
        (keyLength + 7) & ~7
    }

    /// The row stride of transposed keys for `keyLength` keys: whole vectors of keys, and off
    /// 4 KB multiples so the D rows one score step reads do not share an L1 set.
    package static func transposedKeyStride(_ keyLength: Int) -> Int {
        strideOffFourKilobytes(paddedKeyCount(keyLength))
    }

    /// A row stride for rows of `floats` floats: the same, or eight more where that is a multiple of
    /// 4 KB. Rows read side by side at such a stride all map to one L1 set (8 ways on the CPUs we
    /// run) and evict each other; eight floats apart they spread over the sets.
    static func strideOffFourKilobytes(_ floats: Int) -> Int {
        floats % 1024 == 0 ? floats + 8 : floats
    }

    /// `attentionSmallHeads` on keys already transposed: keysT [B, H*D, keyStride], row h*D + d
    /// holding dimension d of head h for every key (columns from Lk to the next multiple of 8
    /// are read but masked, so they may hold anything finite).
    static func attentionSmallHeads(_ s: AttentionShape, q: UnsafePointer<Float>, qRowStride: Int,
                                    keysT: UnsafePointer<Float>, keyStride: Int, v: UnsafePointer<Float>, vRowStride: Int,
                                    scale: Float, bias: UnsafePointer<Float>?, biasPerBatch: Bool,
                                    into out: UnsafeMutablePointer<Float>) {
        let (batch, queryLength, keyLength, heads) = (s.batch, s.queryLength, s.keyLength, s.heads)
        let (headDim, valueHeadDim) = (s.headDim, s.valueHeadDim)
        let valueWidth = heads * valueHeadDim
        // Score rows cover whole vectors of keys (the padding is masked before the softmax).
        let paddedKeys = paddedKeyCount(keyLength)
        precondition(keyStride >= paddedKeys, "attention: transposed key stride \(keyStride) below \(paddedKeys)")
        // Values packed per head: each values-product step reads one head's 16 contiguous floats
        // (reading them in place, 8 heads' worth apart, measured ~10% slower at 4096 keys).
        let packedValues = UnsafeMutablePointer<Float>.allocate(capacity: batch * heads * keyLength * valueHeadDim)
        defer { packedValues.deallocate() }
        parallelFor(batch * heads) { pair in
            let b = pair / heads, h = pair % heads
            let values = v + b * keyLength * vRowStride + h * s.vHeadStep, packed = packedValues + pair * keyLength * valueHeadDim
            copyRows(values, stride: vRowStride, rows: keyLength, width: valueHeadDim, into: packed)
        }

        // Blocks of query rows keep a task's scores within ~256 KB (L2); a multiple of 6 rows.
        let preferredRows = max(6, 65_536 / paddedKeys / 6 * 6)
        forEachAttentionBlock(batch: batch, heads: heads, queryLength: queryLength, scratchPerRow: paddedKeys + 1,
                              preferredRows: preferredRows) { buffer, b, h, firstRow, rows in
            // One buffer per task: the scores [rows, paddedKeys], then each row's 1 / Σ exp.
            let scores = buffer, inverseSums = buffer + rows * paddedKeys
            // scores [rows, paddedKeys] = scale * q_bh[rows, D] * k_bhᵀ
            withUnsafePointer(to: scale) { scale in
                scaledRowsProduct(a: q + (b * queryLength + firstRow) * qRowStride + h * s.qHeadStep, aStride: qRowStride,
                                  rows: rows, depth: headDim, b: keysT + (b * heads + h) * headDim * keyStride, bStride: keyStride,
                                  columns: paddedKeys, rowScales: scale, scaleStride: 0, into: scores, outStride: paddedKeys)
            }
            let biasHead = biasPerBatch ? b * heads + h : h
            let biasRows = bias.map { $0 + (biasHead * queryLength + firstRow) * keyLength }
            softmaxNumerators(scores, rows: rows, count: keyLength, paddedCount: paddedKeys, adding: biasRows,
                              inverseSums: inverseSums)
            // out_bh[rows, Dv] = (exp scores * v_bh[Lk, Dv]) / row sums, into the merged layout
            scaledRowsProduct(a: scores, aStride: paddedKeys, rows: rows, depth: keyLength,
                              b: packedValues + (b * heads + h) * keyLength * valueHeadDim, bStride: valueHeadDim,
                              columns: valueHeadDim, rowScales: inverseSums, scaleStride: 1,
                              into: out + (b * queryLength + firstRow) * valueWidth + h * valueHeadDim, outStride: valueWidth)
        }
    }

    /// One head's keys [Lk, row stride] -> [D, stride]: the key index contiguous, so a row of
    /// scores is a sum of D scaled key rows. Columns from Lk to `stride` are zero.
    static func transposeKeys(_ k: UnsafePointer<Float>, rowStride: Int, keyLength: Int, headDim: Int,
                              into keysT: UnsafeMutablePointer<Float>, stride: Int) {
        transpose(k, stride: rowStride, rows: keyLength, columns: headDim, into: keysT, stride: stride)
        for d in 0..<headDim {
            (keysT + d * stride + keyLength).initialize(repeating: 0, count: stride - keyLength)
        }
    }

    /// The numerators of a stable softmax, in place, for `rows` rows `paddedCount` apart:
    /// row[j] = exp(row[j] + bias[j] - max) for j < count, and inverseSums[r] = 1 / Σ of them.
    /// Rows are `paddedCount` long (a multiple of 8) so every step is a whole vector: the padding
    /// is set to -inf first, which no maximum picks and whose exp (clamped by exp8 to e^-87) is
    /// below a float's resolution of the sum; the values product never reads it. Two rows go
    /// through each pass together: one row's max-then-exp is a chain of dependent steps, and
    /// two chains keep the vector units busy while exp8's constants stay in registers (four
    /// spilled them to the stack).
    static func softmaxNumerators(_ scores: UnsafeMutablePointer<Float>, rows: Int, count: Int, paddedCount: Int,
                                  adding bias: UnsafePointer<Float>?, inverseSums: UnsafeMutablePointer<Float>) {
        for r in 0..<rows {
            let row = scores + r * paddedCount
            if let bias { addInPlace(row, bias + r * count, count: count) }
            for j in count..<paddedCount { row[j] = -.infinity }
        }
        // Long rows with AVX-512 go to one C call for the block, on sixteen lanes (the same maxima,
        // exponentials and lane sums); short ones (image-to-token attention: a few dozen keys) stay
        // in pairs here, where sixteen lanes cost more than they save.
        if wideVectorsAvailable && paddedCount >= 64 {
            sam_softmax_numerators_avx512(scores, Int64(rows), Int64(paddedCount), inverseSums)
            return
        }
        var r = 0
        while r + 2 <= rows {
            let row0 = scores + r * paddedCount, row1 = row0 + paddedCount
            var m0 = SIMD8<Float>(repeating: -.infinity), m1 = m0
            var j = 0
            while j < paddedCount {
                m0 = pointwiseMax8(m0, row0.load8(at: j)); m1 = pointwiseMax8(m1, row1.load8(at: j))
                j += 8
            }
            let max0 = horizontalMax(m0), max1 = horizontalMax(m1)
            var t0 = SIMD8<Float>(repeating: 0), t1 = t0
            j = 0
            while j < paddedCount {
                let e0 = exp8(row0.load8(at: j) - max0), e1 = exp8(row1.load8(at: j) - max1)
                row0.store8(e0, at: j); row1.store8(e1, at: j)
                t0 += e0; t1 += e1
                j += 8
            }
            inverseSums[r] = 1 / horizontalSum(t0); inverseSums[r + 1] = 1 / horizontalSum(t1)
            r += 2
        }
        while r < rows {
            let row = scores + r * paddedCount
            let rowMax = maxOfVectors(UnsafePointer(row), count: paddedCount)
            inverseSums[r] = 1 / horizontalSum(exponentiateVectors(row, count: paddedCount, minus: rowMax))
            r += 1
        }
    }

    /// out[r, c] = rowScales[r * scaleStride] * Σ_t a[r, t] * b[t, c] for r < rows, t < depth, c < columns (rows of
    /// a, b and out `aStride`, `bStride` and `outStride` apart): both products of the attention,
    /// the scores (a = queries, b = transposed keys, a constant scale) and the values (a = the
    /// softmax numerators, b = values, each row's 1 / Σ). Six rows by sixteen columns per step:
    /// twelve independent accumulators, more than the FMA latency times the FMA units, so the
    /// products never wait on each other.
    /// On CPUs with AVX-512 (`wideVectorsAvailable`) and widths that are whole vectors of eight,
    /// `sam_rows_product_avx512` runs the same arithmetic on sixteen lanes, six rows by thirty-two
    /// columns per step: the same bits in half the instructions.
    @inline(__always)
    static func scaledRowsProduct(a: UnsafePointer<Float>, aStride: Int, rows: Int, depth: Int,
                                  b: UnsafePointer<Float>, bStride: Int, columns: Int,
                                  rowScales: UnsafePointer<Float>, scaleStride: Int,
                                  into out: UnsafeMutablePointer<Float>, outStride: Int) {
        if wideVectorsAvailable && columns % 8 == 0 {
            sam_rows_product_avx512(a, Int64(aStride), Int64(rows), Int64(depth), b, Int64(bStride), Int64(columns),
                                    rowScales, Int64(scaleStride), out, Int64(outStride))
            return
        }
        func rowScale(_ row: Int) -> Float { rowScales[row * scaleStride] }
        var r = 0
        while r < rows {
            // Rows past the block's end repeat its last row; their stores rewrite that row with
            // the same values, so the tail needs no separate code.
            let last = rows - 1
            let i1 = min(r + 1, last), i2 = min(r + 2, last), i3 = min(r + 3, last), i4 = min(r + 4, last), i5 = min(r + 5, last)
            let a0 = a + r * aStride, a1 = a + i1 * aStride, a2 = a + i2 * aStride
            let a3 = a + i3 * aStride, a4 = a + i4 * aStride, a5 = a + i5 * aStride
            let o0 = out + r * outStride, o1 = out + i1 * outStride, o2 = out + i2 * outStride
            let o3 = out + i3 * outStride, o4 = out + i4 * outStride, o5 = out + i5 * outStride
            let c0 = rowScale(r), c1 = rowScale(i1), c2 = rowScale(i2)
            let c3 = rowScale(i3), c4 = rowScale(i4), c5 = rowScale(i5)
            var c = 0
            while c + 16 <= columns {
                let zero = SIMD8<Float>(repeating: 0)
                var s00 = zero, s01 = zero, s10 = zero, s11 = zero, s20 = zero, s21 = zero
                var s30 = zero, s31 = zero, s40 = zero, s41 = zero, s50 = zero, s51 = zero
                for t in 0..<depth {
                    let b0 = b.load8(at: t * bStride + c), b1 = b.load8(at: t * bStride + c + 8)
                    let x0 = SIMD8(repeating: a0[t]), x1 = SIMD8(repeating: a1[t]), x2 = SIMD8(repeating: a2[t])
                    s00 = multiplyAdd(x0, b0, s00); s01 = multiplyAdd(x0, b1, s01)
                    s10 = multiplyAdd(x1, b0, s10); s11 = multiplyAdd(x1, b1, s11)
                    s20 = multiplyAdd(x2, b0, s20); s21 = multiplyAdd(x2, b1, s21)
                    let x3 = SIMD8(repeating: a3[t]), x4 = SIMD8(repeating: a4[t]), x5 = SIMD8(repeating: a5[t])
                    s30 = multiplyAdd(x3, b0, s30); s31 = multiplyAdd(x3, b1, s31)
                    s40 = multiplyAdd(x4, b0, s40); s41 = multiplyAdd(x4, b1, s41)
                    s50 = multiplyAdd(x5, b0, s50); s51 = multiplyAdd(x5, b1, s51)
                }
                o0.store8(c0 * s00, at: c); o0.store8(c0 * s01, at: c + 8)
                o1.store8(c1 * s10, at: c); o1.store8(c1 * s11, at: c + 8)
                o2.store8(c2 * s20, at: c); o2.store8(c2 * s21, at: c + 8)
                o3.store8(c3 * s30, at: c); o3.store8(c3 * s31, at: c + 8)
                o4.store8(c4 * s40, at: c); o4.store8(c4 * s41, at: c + 8)
                o5.store8(c5 * s50, at: c); o5.store8(c5 * s51, at: c + 8)
                c += 16
            }
            if c + 8 <= columns {
                let zero = SIMD8<Float>(repeating: 0)
                var s0 = zero, s1 = zero, s2 = zero, s3 = zero, s4 = zero, s5 = zero
                for t in 0..<depth {
                    let b0 = b.load8(at: t * bStride + c)
                    s0 = multiplyAdd(a0[t], b0, s0); s1 = multiplyAdd(a1[t], b0, s1); s2 = multiplyAdd(a2[t], b0, s2)
                    s3 = multiplyAdd(a3[t], b0, s3); s4 = multiplyAdd(a4[t], b0, s4); s5 = multiplyAdd(a5[t], b0, s5)
                }
                o0.store8(c0 * s0, at: c); o1.store8(c1 * s1, at: c); o2.store8(c2 * s2, at: c)
                o3.store8(c3 * s3, at: c); o4.store8(c4 * s4, at: c); o5.store8(c5 * s5, at: c)
                c += 8
            }
            for column in c..<columns {  // widths that are not a multiple of 8
                for i in 0..<6 {
                    let row = min(r + i, last)
                    var sum: Float = 0
                    for t in 0..<depth { sum += a[row * aStride + t] * b[t * bStride + column] }
                    out[row * outStride + column] = rowScale(row) * sum
                }
            }
            r += 6
        }
    }
}
