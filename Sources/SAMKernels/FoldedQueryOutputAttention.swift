import SAMBLAS
import SAMTensor

extension Kernels {
    /// Multi-head attention of many query tokens over a few keys, with the query and output
    /// projections folded into the keys and values instead of applied to every query token.
    /// Per query token x (a row, before q_proj), with k_hj and v_hj head h's projected keys and values:
    ///
    ///     out = b_o + Σ_h W_o,h Σ_j softmax_j(scale · (W_q,h x + b_q,h)·k_hj) v_hj
    ///         = b_o + Σ_h Σ_j softmax_j(x·k̃_hj + c_hj) u_hj
    ///
    /// with k̃_hj = scale · W_q,hᵀ k_hj, c_hj = scale · b_q,h·k_hj and u_hj = W_o,h v_hj, all of token
    /// width E: two products of every query token with H·Lk' folded keys (Lk' = Lk rounded up to
    /// whole vectors of 8) instead of q_proj and out_proj with H·D columns each, so this pays when
    /// H·Lk' < H·D (`foldingQueryOutputProjectionsPays`): SAM's image-to-token attention for a click
    /// or a box (7 or 8 prompt tokens, 8 heads, 128 projected dims, over 4096 image tokens). The
    /// same function in another order: results differ from the projected path by rounding.
    ///
    /// tokens [1, Lq, E] (the query tokens before q_proj), keys [1, Lk, H*D] and values
    /// [1, Lk, H*Dv] (after k_proj and v_proj), queryWeight [H*D, E], queryBias [H*D], outputWeight
    /// [E, H*Dv], outputBias [E]. Returns [1, Lq, E]: out_proj's output, plus `residual` when given.
    /// ref: segment_anything/modeling/transformer.py Attention.forward — q = self.q_proj(q);
    /// attn = q @ k.permute(0, 1, 3, 2) / math.sqrt(c_per_head); softmax; out = self.out_proj(attn @ v)
    package static func attentionFoldingQueryOutputProjections(tokens: FloatTensor, keys: FloatTensor, values: FloatTensor,
                                                              queryWeight: some WeightOperand, queryBias: FloatTensor,
                                                              outputWeight: some WeightOperand, outputBias: FloatTensor,
                                                              heads: Int, scale: Float, residual: FloatTensor?) -> FloatTensor {
        precondition(tokens.shape.count == 3 && keys.shape.count == 3 && values.shape.count == 3
                     && tokens.shape[0] == 1 && keys.shape[0] == 1 && values.shape[0] == 1,
                     "attention (folded): tokens, k, v must be [1, L, width], got \(tokens.shape), \(keys.shape), \(values.shape)")
        let queryLength = tokens.shape[1], tokenWidth = tokens.shape[2]
        let keyLength = keys.shape[1], keyWidth = keys.shape[2], valueWidth = values.shape[2]
        precondition(values.shape[1] == keyLength && queryWeight.shape == [keyWidth, tokenWidth] && queryBias.count == keyWidth
                     && outputWeight.shape == [tokenWidth, valueWidth] && outputBias.count == tokenWidth,
                     "attention (folded): keys \(keys.shape), values \(values.shape), weights \(queryWeight.shape), \(outputWeight.shape) do not fit tokens \(tokens.shape)")
        precondition(heads >= 1 && keyWidth % heads == 0 && valueWidth % heads == 0,
                     "attention (folded): widths \(keyWidth), \(valueWidth) not divisible by \(heads) heads")
        let outShape = [1, queryLength, tokenWidth]
        if let residual { precondition(residual.shape == outShape, "attention (folded): residual \(residual.shape) is not \(outShape)") }
        guard queryLength > 0, tokenWidth > 0 else { return FloatTensor(zeros: outShape) }
        precondition(keyLength > 0, "attention (folded): softmax over zero keys")
        let headDim = keyWidth / heads, valueHeadDim = valueWidth / heads
        // Columns of the scores: (head, key), each head's keys padded to whole vectors.
        let paddedKeys = paddedKeyCount(keyLength), columns = heads * paddedKeys
        var output = biasSeededRows(outShape, bias: outputBias)
        tokens.data.withUnsafeBufferPointer { xBuffer in
        keys.data.withUnsafeBufferPointer { kBuffer in
        values.data.withUnsafeBufferPointer { vBuffer in
        queryWeight.withFloats { queryWeightBuffer in
        outputWeight.withFloats { outputWeightBuffer in
        (residual?.data ?? []).withUnsafeBufferPointer { residualBuffer in
        output.data.withUnsafeMutableBufferPointer { outBuffer in
            let (x, k, v, out) = (xBuffer.baseAddress!, kBuffer.baseAddress!, vBuffer.baseAddress!, outBuffer.baseAddress!)
            let (wq, wo) = (queryWeightBuffer.baseAddress!, outputWeightBuffer.baseAddress!)
            // Padding rows stay zero: their scores are masked and their values add nothing.
            let foldedKeys = UnsafeMutablePointer<Float>.allocate(capacity: columns * tokenWidth)
            let foldedValues = UnsafeMutablePointer<Float>.allocate(capacity: columns * tokenWidth)
            let scoreBias = UnsafeMutablePointer<Float>.allocate(capacity: columns)
            defer { foldedKeys.deallocate(); foldedValues.deallocate(); scoreBias.deallocate() }
            foldedKeys.initialize(repeating: 0, count: columns * tokenWidth)
            foldedValues.initialize(repeating: 0, count: columns * tokenWidth)
            scoreBias.initialize(repeating: 0, count: columns)
            for h in 0..<heads {
                // k̃_h = scale · k_h W_q,h  [Lk, E]
                BLAS.sgemm(transA: false, transB: false, m: keyLength, n: tokenWidth, k: headDim, alpha: scale,
                           a: k + h * headDim, lda: keyWidth, b: wq + h * headDim * tokenWidth, ldb: tokenWidth,
                           beta: 0, c: foldedKeys + h * paddedKeys * tokenWidth, ldc: tokenWidth)
                // u_h = v_h W_o,hᵀ  [Lk, E]: W_o,h is W_o's columns h*Dv ..< (h+1)*Dv.
                BLAS.sgemm(transA: false, transB: true, m: keyLength, n: tokenWidth, k: valueHeadDim, alpha: 1,
                           a: v + h * valueHeadDim, lda: valueWidth, b: wo + h * valueHeadDim, ldb: valueWidth,
                           beta: 0, c: foldedValues + h * paddedKeys * tokenWidth, ldc: tokenWidth)
                // c_h = scale · k_h b_q,h  [Lk]
                for j in 0..<keyLength {
                    var sum: Float = 0
                    for d in 0..<headDim { sum += k[j * keyWidth + h * headDim + d] * queryBias.data[h * headDim + d] }
                    scoreBias[h * paddedKeys + j] = scale * sum
                }
            }
            // Tiles of query rows: each tile's scores (tileRows x columns) stay in L2 between the products.
            let tileRows = 256, tiles = (queryLength + tileRows - 1) / tileRows
            let residualRows = residual == nil ? nil : residualBuffer.baseAddress
            parallelFor(tiles) { tile in
                let first = tile * tileRows, rows = min(tileRows, queryLength - first)
                let scores = UnsafeMutablePointer<Float>.allocate(capacity: rows * columns)
                let inverseSums = UnsafeMutablePointer<Float>.allocate(capacity: rows * heads)
                defer { scores.deallocate(); inverseSums.deallocate() }
                // scores [rows, (h, j)] = c + x k̃ᵀ
                seedRows(scores, rows: rows, with: scoreBias, width: columns)
                BLAS.sgemm(transA: false, transB: true, m: rows, n: columns, k: tokenWidth, alpha: 1,
                           a: x + first * tokenWidth, lda: tokenWidth, b: foldedKeys, ldb: tokenWidth,
                           beta: 1, c: scores, ldc: columns)
                // A softmax over each (row, head) segment of Lk keys; padding set to zero after it.
                softmaxNumerators(scores, rows: rows * heads, count: keyLength, paddedCount: paddedKeys, adding: nil,
                                  inverseSums: inverseSums)
                for segment in 0..<(rows * heads) {
                    let weights = scores + segment * paddedKeys, inverseSum = SIMD8<Float>(repeating: inverseSums[segment])
                    var j = 0
                    while j < paddedKeys { weights.store8(weights.load8(at: j) * inverseSum, at: j); j += 8 }
                    for pad in keyLength..<paddedKeys { weights[pad] = 0 }
                }
                // out rows (seeded with b_o) += weights · u, then the residual.
                let outRows = out + first * tokenWidth
                BLAS.sgemm(transA: false, transB: false, m: rows, n: tokenWidth, k: columns, alpha: 1,
                           a: scores, lda: columns, b: foldedValues, ldb: tokenWidth, beta: 1, c: outRows, ldc: tokenWidth)
                if let residualRows { addInPlace(outRows, residualRows + first * tokenWidth, count: rows * tokenWidth) }
            }
        }
        }
        }
        }
        }
        }
        }
        return output
    }

    /// Whether `attentionFoldingQueryOutputProjections` does fewer multiply-adds than q_proj and
    /// out_proj on every query token: heads times the padded key count below the projected width.
    package static func foldingQueryOutputProjectionsPays(keyLength: Int, heads: Int, projectedWidth: Int) -> Bool {
        heads * paddedKeyCount(keyLength) < projectedWidth
    }
}
