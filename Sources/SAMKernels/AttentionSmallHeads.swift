extension Kernels {
    /// The attention path for narrow heads (D, Dv <= 64) with one long side (the decoder's
    /// 4096 image tokens, as keys or as queries), where BLAS calls per (head, block of query
    /// rows) are mostly packing: with D = 16 each score is a 16-term dot product, too little
    /// work to amortise packing its operands.
    ///
    /// Keys are transposed once per head to [D, stride] (zero-padded to whole vectors, the row
    /// stride off 4 KB multiples so the D rows read together do not share an L1 set). Each task
    /// (a head and a block of query rows) computes its scores six query rows by sixteen keys at
    /// a time, exponentiates them in place, and accumulates the values six rows by sixteen
    /// columns at a time, read in place; the softmax's division by the row sum is applied to
    /// those sums as they are stored, straight into the merged-heads output. Row and column
    /// layout as `attentionBLAS`.
    static func attentionSmallHeads(_ s: AttentionShape, q: UnsafePointer<Float>, qRowStride: Int,
                                    k: UnsafePointer<Float>, kRowStride: Int, v: UnsafePointer<Float>, vRowStride: Int,
                                    scale: Float, bias: UnsafePointer<Float>?, biasPerBatch: Bool,
                                    into out: UnsafeMutablePointer<Float>) {
        let (batch, queryLength, keyLength, heads) = (s.batch, s.queryLength, s.keyLength, s.heads)
        let (headDim, valueHeadDim) = (s.headDim, s.valueHeadDim)
        let valueWidth = heads * valueHeadDim
        // Score rows cover whole vectors of keys (the padding is masked before the softmax).
        let paddedKeys = (keyLength + 7) & ~7
        let keyStride = paddedKeys % 1024 == 0 ? paddedKeys + 8 : paddedKeys
        let keysT = UnsafeMutablePointer<Float>.allocate(capacity: batch * heads * headDim * keyStride)
        let packedValues = UnsafeMutablePointer<Float>.allocate(capacity: batch * heads * keyLength * valueHeadDim)
        defer { keysT.deallocate(); packedValues.deallocate() }
        parallelFor(batch * heads) { pair in
            let b = pair / heads, h = pair % heads
            transposeKeys(k + b * keyLength * kRowStride + h * headDim, rowStride: kRowStride, keyLength: keyLength,
                          headDim: headDim, into: keysT + pair * headDim * keyStride, stride: keyStride)
            let values = v + b * keyLength * vRowStride + h * valueHeadDim, packed = packedValues + pair * keyLength * valueHeadDim
            for j in 0..<keyLength {
                (packed + j * valueHeadDim).initialize(from: values + j * vRowStride, count: valueHeadDim)
            }
        }

        // Blocks of query rows keep a task's scores within ~256 KB (L2); a multiple of 6 rows.
        let preferredRows = max(6, 65_536 / paddedKeys / 6 * 6)
        forEachAttentionBlock(batch: batch, heads: heads, queryLength: queryLength, scratchPerRow: paddedKeys + 1,
                              preferredRows: preferredRows) { buffer, b, h, firstRow, rows in
            // One buffer per task: the scores [rows, paddedKeys], then each row's 1 / Σ exp.
            let scores = buffer, inverseSums = buffer + rows * paddedKeys
            // scores [rows, paddedKeys] = scale * q_bh[rows, D] * k_bhᵀ
            attentionScores(q: q + (b * queryLength + firstRow) * qRowStride + h * headDim, qStride: qRowStride, rows: rows,
                            keysT: keysT + (b * heads + h) * headDim * keyStride, keyStride: keyStride, depth: headDim,
                            paddedKeys: paddedKeys, scale: scale, into: scores)
            let biasHead = biasPerBatch ? b * heads + h : h
            let biasRows = bias.map { $0 + (biasHead * queryLength + firstRow) * keyLength }
            softmaxNumerators(scores, rows: rows, count: keyLength, paddedCount: paddedKeys, adding: biasRows,
                              inverseSums: inverseSums)
            // out_bh[rows, Dv] = (exp scores * v_bh[Lk, Dv]) / row sums, into the merged layout
            attentionValues(scores, pStride: paddedKeys, rows: rows, keyLength: keyLength, rowScales: inverseSums,
                            values: packedValues + (b * heads + h) * keyLength * valueHeadDim, valueStride: valueHeadDim,
                            width: valueHeadDim, into: out + (b * queryLength + firstRow) * valueWidth + h * valueHeadDim,
                            outStride: valueWidth)
        }
    }

    /// One head's keys [Lk, row stride] -> [D, stride]: the key index contiguous, so a row of
    /// scores is a sum of D scaled key rows. Columns from Lk to `stride` are zero.
    private static func transposeKeys(_ k: UnsafePointer<Float>, rowStride: Int, keyLength: Int, headDim: Int,
                                      into keysT: UnsafeMutablePointer<Float>, stride: Int) {
        for j in 0..<keyLength {
            let row = k + j * rowStride
            for d in 0..<headDim { (keysT + d * stride + j).initialize(to: row[d]) }
        }
        for d in 0..<headDim {
            (keysT + d * stride + keyLength).initialize(repeating: 0, count: stride - keyLength)
        }
    }

    /// The numerators of a stable softmax, in place, for `rows` rows `paddedCount` apart:
    /// row[j] = exp(row[j] + bias[j] - max) for j < count, and inverseSums[r] = 1 / Σ of them.
    /// Rows are `paddedCount` long (a multiple of 8) so every step is a whole vector: the padding
    /// is set to -inf first, which no maximum picks and whose exp (clamped by exp8 to e^-87) is
    /// below a float's resolution of the sum; the values product never reads it. Four rows go
    /// through each pass together: one row's max-then-exp is a chain of dependent steps, and
    /// four independent chains keep the vector units busy.
    static func softmaxNumerators(_ scores: UnsafeMutablePointer<Float>, rows: Int, count: Int, paddedCount: Int,
                                  adding bias: UnsafePointer<Float>?, inverseSums: UnsafeMutablePointer<Float>) {
        for r in 0..<rows {
            let row = scores + r * paddedCount
            if let bias {
                let biasRow = bias + r * count
                var j = 0
                while j + 8 <= count { row.store8(row.load8(at: j) + biasRow.load8(at: j), at: j); j += 8 }
                while j < count { row[j] += biasRow[j]; j += 1 }
            }
            for j in count..<paddedCount { row[j] = -.infinity }
        }
        var r = 0
        while r + 4 <= rows {
            let row0 = scores + r * paddedCount, row1 = row0 + paddedCount
            let row2 = row1 + paddedCount, row3 = row2 + paddedCount
            var m0 = SIMD8<Float>(repeating: -.infinity), m1 = m0, m2 = m0, m3 = m0
            var j = 0
            while j < paddedCount {
                m0 = pointwiseMax8(m0, row0.load8(at: j)); m1 = pointwiseMax8(m1, row1.load8(at: j))
                m2 = pointwiseMax8(m2, row2.load8(at: j)); m3 = pointwiseMax8(m3, row3.load8(at: j))
                j += 8
            }
            let max0 = horizontalMax(m0), max1 = horizontalMax(m1), max2 = horizontalMax(m2), max3 = horizontalMax(m3)
            var t0 = SIMD8<Float>(repeating: 0), t1 = t0, t2 = t0, t3 = t0
            j = 0
            while j < paddedCount {
                let e0 = exp8(row0.load8(at: j) - max0), e1 = exp8(row1.load8(at: j) - max1)
                let e2 = exp8(row2.load8(at: j) - max2), e3 = exp8(row3.load8(at: j) - max3)
                row0.store8(e0, at: j); row1.store8(e1, at: j); row2.store8(e2, at: j); row3.store8(e3, at: j)
                t0 += e0; t1 += e1; t2 += e2; t3 += e3
                j += 8
            }
            inverseSums[r] = 1 / horizontalSum(t0); inverseSums[r + 1] = 1 / horizontalSum(t1)
            inverseSums[r + 2] = 1 / horizontalSum(t2); inverseSums[r + 3] = 1 / horizontalSum(t3)
            r += 4
        }
        while r < rows {
            let row = scores + r * paddedCount
            var maxima = SIMD8<Float>(repeating: -.infinity)
            var j = 0
            while j < paddedCount { maxima = pointwiseMax8(maxima, row.load8(at: j)); j += 8 }
            let rowMax = horizontalMax(maxima)
            var sums = SIMD8<Float>(repeating: 0)
            j = 0
            while j < paddedCount {
                let e = exp8(row.load8(at: j) - rowMax)
                row.store8(e, at: j)
                sums += e
                j += 8
            }
            inverseSums[r] = 1 / horizontalSum(sums)
            r += 1
        }
    }

    /// scores[r, j] = scale * Σ_d q[r, d] * keysT[d, j] for r < rows, j < paddedKeys (a multiple
    /// of 8; rows of `scores` paddedKeys apart, of keysT `keyStride` apart). Six query rows by
    /// sixteen keys per step: twelve independent accumulators, more than the FMA latency times
    /// the FMA units, so the products never wait on each other.
    @inline(__always)
    private static func attentionScores(q: UnsafePointer<Float>, qStride: Int, rows: Int, keysT: UnsafePointer<Float>,
                                        keyStride: Int, depth: Int, paddedKeys: Int, scale: Float,
                                        into scores: UnsafeMutablePointer<Float>) {
        var r = 0
        while r < rows {
            // Rows past the block's end repeat its last row; their stores rewrite that row with
            // the same values, so the tail needs no separate code.
            let last = rows - 1
            let i1 = min(r + 1, last), i2 = min(r + 2, last), i3 = min(r + 3, last), i4 = min(r + 4, last), i5 = min(r + 5, last)
            let q0 = q + r * qStride, q1 = q + i1 * qStride, q2 = q + i2 * qStride
            let q3 = q + i3 * qStride, q4 = q + i4 * qStride, q5 = q + i5 * qStride
            let s0 = scores + r * paddedKeys, s1 = scores + i1 * paddedKeys, s2 = scores + i2 * paddedKeys
            let s3 = scores + i3 * paddedKeys, s4 = scores + i4 * paddedKeys, s5 = scores + i5 * paddedKeys
            var j = 0
            while j + 16 <= paddedKeys {
                let zero = SIMD8<Float>(repeating: 0)
                var a00 = zero, a01 = zero, a10 = zero, a11 = zero, a20 = zero, a21 = zero
                var a30 = zero, a31 = zero, a40 = zero, a41 = zero, a50 = zero, a51 = zero
                for d in 0..<depth {
                    let k0 = keysT.load8(at: d * keyStride + j), k1 = keysT.load8(at: d * keyStride + j + 8)
                    let x0 = SIMD8(repeating: q0[d]), x1 = SIMD8(repeating: q1[d]), x2 = SIMD8(repeating: q2[d])
                    a00 = multiplyAdd(x0, k0, a00); a01 = multiplyAdd(x0, k1, a01)
                    a10 = multiplyAdd(x1, k0, a10); a11 = multiplyAdd(x1, k1, a11)
                    a20 = multiplyAdd(x2, k0, a20); a21 = multiplyAdd(x2, k1, a21)
                    let x3 = SIMD8(repeating: q3[d]), x4 = SIMD8(repeating: q4[d]), x5 = SIMD8(repeating: q5[d])
                    a30 = multiplyAdd(x3, k0, a30); a31 = multiplyAdd(x3, k1, a31)
                    a40 = multiplyAdd(x4, k0, a40); a41 = multiplyAdd(x4, k1, a41)
                    a50 = multiplyAdd(x5, k0, a50); a51 = multiplyAdd(x5, k1, a51)
                }
                s0.store8(scale * a00, at: j); s0.store8(scale * a01, at: j + 8)
                s1.store8(scale * a10, at: j); s1.store8(scale * a11, at: j + 8)
                s2.store8(scale * a20, at: j); s2.store8(scale * a21, at: j + 8)
                s3.store8(scale * a30, at: j); s3.store8(scale * a31, at: j + 8)
                s4.store8(scale * a40, at: j); s4.store8(scale * a41, at: j + 8)
                s5.store8(scale * a50, at: j); s5.store8(scale * a51, at: j + 8)
                j += 16
            }
            if j < paddedKeys {  // one last vector of eight keys
                let zero = SIMD8<Float>(repeating: 0)
                var a0 = zero, a1 = zero, a2 = zero, a3 = zero, a4 = zero, a5 = zero
                for d in 0..<depth {
                    let k0 = keysT.load8(at: d * keyStride + j)
                    a0 = multiplyAdd(q0[d], k0, a0); a1 = multiplyAdd(q1[d], k0, a1); a2 = multiplyAdd(q2[d], k0, a2)
                    a3 = multiplyAdd(q3[d], k0, a3); a4 = multiplyAdd(q4[d], k0, a4); a5 = multiplyAdd(q5[d], k0, a5)
                }
                s0.store8(scale * a0, at: j); s1.store8(scale * a1, at: j); s2.store8(scale * a2, at: j)
                s3.store8(scale * a3, at: j); s4.store8(scale * a4, at: j); s5.store8(scale * a5, at: j)
            }
            r += 6
        }
    }

    /// out[r, e] = rowScales[r] * Σ_j p[r, j] * values[j, e] for r < rows, j < keyLength,
    /// e < width (rows of p, values and out `pStride`, `valueStride` and `outStride` apart).
    /// Six rows by sixteen value columns per step, as in `attentionScores`.
    @inline(__always)
    private static func attentionValues(_ p: UnsafeMutablePointer<Float>, pStride: Int, rows: Int, keyLength: Int,
                                        rowScales: UnsafePointer<Float>, values: UnsafePointer<Float>, valueStride: Int,
                                        width: Int, into out: UnsafeMutablePointer<Float>, outStride: Int) {
        var r = 0
        while r < rows {
            // As in attentionScores, rows past the end repeat (and rewrite) the last row.
            let last = rows - 1
            let i1 = min(r + 1, last), i2 = min(r + 2, last), i3 = min(r + 3, last), i4 = min(r + 4, last), i5 = min(r + 5, last)
            let p0 = p + r * pStride, p1 = p + i1 * pStride, p2 = p + i2 * pStride
            let p3 = p + i3 * pStride, p4 = p + i4 * pStride, p5 = p + i5 * pStride
            let o0 = out + r * outStride, o1 = out + i1 * outStride, o2 = out + i2 * outStride
            let o3 = out + i3 * outStride, o4 = out + i4 * outStride, o5 = out + i5 * outStride
            let c0 = rowScales[r], c1 = rowScales[i1], c2 = rowScales[i2]
            let c3 = rowScales[i3], c4 = rowScales[i4], c5 = rowScales[i5]
            var e = 0
            while e + 16 <= width {
                let zero = SIMD8<Float>(repeating: 0)
                var a00 = zero, a01 = zero, a10 = zero, a11 = zero, a20 = zero, a21 = zero
                var a30 = zero, a31 = zero, a40 = zero, a41 = zero, a50 = zero, a51 = zero
                for j in 0..<keyLength {
                    let v0 = values.load8(at: j * valueStride + e), v1 = values.load8(at: j * valueStride + e + 8)
                    let x0 = SIMD8(repeating: p0[j]), x1 = SIMD8(repeating: p1[j]), x2 = SIMD8(repeating: p2[j])
                    a00 = multiplyAdd(x0, v0, a00); a01 = multiplyAdd(x0, v1, a01)
                    a10 = multiplyAdd(x1, v0, a10); a11 = multiplyAdd(x1, v1, a11)
                    a20 = multiplyAdd(x2, v0, a20); a21 = multiplyAdd(x2, v1, a21)
                    let x3 = SIMD8(repeating: p3[j]), x4 = SIMD8(repeating: p4[j]), x5 = SIMD8(repeating: p5[j])
                    a30 = multiplyAdd(x3, v0, a30); a31 = multiplyAdd(x3, v1, a31)
                    a40 = multiplyAdd(x4, v0, a40); a41 = multiplyAdd(x4, v1, a41)
                    a50 = multiplyAdd(x5, v0, a50); a51 = multiplyAdd(x5, v1, a51)
                }
                o0.store8(c0 * a00, at: e); o0.store8(c0 * a01, at: e + 8)
                o1.store8(c1 * a10, at: e); o1.store8(c1 * a11, at: e + 8)
                o2.store8(c2 * a20, at: e); o2.store8(c2 * a21, at: e + 8)
                o3.store8(c3 * a30, at: e); o3.store8(c3 * a31, at: e + 8)
                o4.store8(c4 * a40, at: e); o4.store8(c4 * a41, at: e + 8)
                o5.store8(c5 * a50, at: e); o5.store8(c5 * a51, at: e + 8)
                e += 16
            }
            if e + 8 <= width {
                let zero = SIMD8<Float>(repeating: 0)
                var a0 = zero, a1 = zero, a2 = zero, a3 = zero, a4 = zero, a5 = zero
                for j in 0..<keyLength {
                    let v0 = values.load8(at: j * valueStride + e)
                    a0 = multiplyAdd(p0[j], v0, a0); a1 = multiplyAdd(p1[j], v0, a1); a2 = multiplyAdd(p2[j], v0, a2)
                    a3 = multiplyAdd(p3[j], v0, a3); a4 = multiplyAdd(p4[j], v0, a4); a5 = multiplyAdd(p5[j], v0, a5)
                }
                o0.store8(c0 * a0, at: e); o1.store8(c1 * a1, at: e); o2.store8(c2 * a2, at: e)
                o3.store8(c3 * a3, at: e); o4.store8(c4 * a4, at: e); o5.store8(c5 * a5, at: e)
                e += 8
            }
            for column in e..<width {  // widths that are not a multiple of 8
                for i in 0..<6 {
                    let row = min(r + i, last)
                    var sum: Float = 0
                    for j in 0..<keyLength { sum += p[row * pStride + j] * values[j * valueStride + column] }
                    out[row * outStride + column] = rowScales[row] * sum
                }
            }
            r += 6
        }
    }
}
