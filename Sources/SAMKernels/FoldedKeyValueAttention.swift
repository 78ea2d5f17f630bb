import SAMBLAS
import SAMTensor

extension Kernels {
    /// Multi-head attention of a few queries over many tokens, with the tokens' key and value
    /// projections folded into the queries and the output instead of applied to every token.
    /// Per head h, with x the key tokens and x' the value tokens (rows):
    ///
    ///     softmax(scale · q_h (W_k,h x + b_k,h)ᵀ) (W_v,h x' + b_v,h)
    ///       = softmax(scale · (q_h W_k,h) xᵀ) x' W_v,hᵀ + b_v,h
    ///
    /// q_h·b_k,h is the same for every key of a query row, so the softmax cancels it; each row of
    /// softmax weights sums to one, so b_v,h passes through. The products cost 2·Lk·E·H·Lq
    /// multiply-adds instead of the 2·Lk·E·(H·D) of projecting every token, so this pays when
    /// H·Lq < H·D (`pays`): SAM's mask decoder with a click or a box (7 prompt tokens, 8 heads,
    /// 128 projected dims) over its 4096 image tokens. The same function in another order: the
    /// sums are associated differently, so results differ from the projected path by rounding.
    ///
    /// queries [1, Lq, H*D] (already projected, q_proj's output), keys and values [1, Lk, E] (the
    /// tokens before k_proj and v_proj), keyWeight [H*D, E], valueWeight [H*Dv, E], valueBias
    /// [H*Dv]. Returns [1, Lq, H*Dv], heads side by side, as `attention` on projected keys and values.
    /// ref: segment_anything/modeling/transformer.py Attention.forward — k = self.k_proj(k);
    /// v = self.v_proj(v); attn = q @ k.permute(0, 1, 3, 2) / math.sqrt(c_per_head); softmax; attn @ v
    package static func attentionFoldingKeyValueProjections(queries: FloatTensor, keys: FloatTensor, values: FloatTensor,
                                                   keyWeight: some WeightOperand, valueWeight: some WeightOperand,
                                                   valueBias: FloatTensor, heads: Int, scale: Float) -> FloatTensor {
        precondition(queries.shape.count == 3 && keys.shape.count == 3 && values.shape.count == 3
                     && queries.shape[0] == 1 && keys.shape[0] == 1 && values.shape[0] == 1,
                     "attention (folded): q, k, v must be [1, L, width], got \(queries.shape), \(keys.shape), \(values.shape)")
        let queryLength = queries.shape[1], keyWidth = queries.shape[2]
        let keyLength = keys.shape[1], tokenWidth = keys.shape[2]
        let valueWidth = valueWeight.shape[0]
        precondition(values.shape[1] == keyLength && values.shape[2] == tokenWidth
                     && keyWeight.shape == [keyWidth, tokenWidth] && valueWeight.shape == [valueWidth, tokenWidth]
                     && valueBias.count == valueWidth,
                     "attention (folded): keys \(keys.shape), values \(values.shape), weights \(keyWeight.shape), \(valueWeight.shape) do not fit queries \(queries.shape)")
        precondition(heads >= 1 && keyWidth % heads == 0 && valueWidth % heads == 0,
                     "attention (folded): widths \(keyWidth), \(valueWidth) not divisible by \(heads) heads")
        let headDim = keyWidth / heads, valueHeadDim = valueWidth / heads
        let outShape = [1, queryLength, valueWidth]
        guard queryLength > 0, valueWidth > 0 else { return FloatTensor(zeros: outShape) }
        precondition(keyLength > 0, "attention (folded): softmax over zero keys")
        // Rows (head, query) of the folded queries, the scores and the mixed tokens.
        let foldedRows = heads * queryLength
        var output = biasSeededRows(outShape, bias: valueBias)
        queries.data.withUnsafeBufferPointer { qBuffer in
        keys.data.withUnsafeBufferPointer { kBuffer in
        values.data.withUnsafeBufferPointer { vBuffer in
        keyWeight.withFloats { keyWeightBuffer in
        valueWeight.withFloats { valueWeightBuffer in
        output.data.withUnsafeMutableBufferPointer { outBuffer in
            let (q, k, v, out) = (qBuffer.baseAddress!, kBuffer.baseAddress!, vBuffer.baseAddress!, outBuffer.baseAddress!)
            let folded = UnsafeMutablePointer<Float>.allocate(capacity: foldedRows * tokenWidth)
            let scores = UnsafeMutablePointer<Float>.allocate(capacity: foldedRows * keyLength)
            let mixed = UnsafeMutablePointer<Float>.allocate(capacity: foldedRows * tokenWidth)
            defer { folded.deallocate(); scores.deallocate(); mixed.deallocate() }
            // folded[h, t] = scale · q_h[t] W_k,h: each head's queries taken back to token width.
            for h in 0..<heads {
                BLAS.sgemm(transA: false, transB: false, m: queryLength, n: tokenWidth, k: headDim, alpha: scale,
                           a: q + h * headDim, lda: keyWidth, b: keyWeightBuffer.baseAddress! + h * headDim * tokenWidth,
                           ldb: tokenWidth, beta: 0, c: folded + h * queryLength * tokenWidth, ldc: tokenWidth)
            }
            // scores [H*Lq, Lk] = folded · xᵀ, one product for every head, then the softmax of each row.
            gemm(transA: false, transB: true, m: foldedRows, n: keyLength, k: tokenWidth, alpha: 1,
                 a: folded, lda: tokenWidth, b: k, ldb: tokenWidth, beta: 0, c: scores, ldc: keyLength)
            parallelRanges(foldedRows, minimumChunk: 1) { rows in
                for r in rows { softmaxRow(scores + r * keyLength, count: keyLength) }
            }
            // mixed [H*Lq, E] = weights · x': each head's weighted sum of the value tokens.
            gemm(transA: false, transB: false, m: foldedRows, n: tokenWidth, k: keyLength, alpha: 1,
                 a: scores, lda: keyLength, b: v, ldb: tokenWidth, beta: 0, c: mixed, ldc: tokenWidth)
            // out[t, head h] = b_v,h + mixed[h, t] W_v,hᵀ, into the merged-heads layout.
            for h in 0..<heads {
                BLAS.sgemm(transA: false, transB: true, m: queryLength, n: valueHeadDim, k: tokenWidth, alpha: 1,
                           a: mixed + h * queryLength * tokenWidth, lda: tokenWidth,
                           b: valueWeightBuffer.baseAddress! + h * valueHeadDim * tokenWidth, ldb: tokenWidth,
                           beta: 1, c: out + h * valueHeadDim, ldc: valueWidth)
            }
        }
        }
        }
        }
        }
        }
        return output
    }

    /// Whether `attentionFoldingKeyValueProjections` does fewer multiply-adds than projecting the keys and
    /// values: heads · queries below the projected width (the attention products themselves are
    /// then no larger either).
    package static func foldingKeyValueProjectionsPays(queryLength: Int, heads: Int, projectedWidth: Int) -> Bool {
        heads * queryLength < projectedWidth
    }
}
