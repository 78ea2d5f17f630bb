import SAMBLAS
import SAMTensor

extension Kernels {
    /// Multi-head scaled dot-product attention on already-projected tensors.
    ///
    /// q [B, Lq, H*D], k [B, Lk, H*D], v [B, Lk, H*Dv], heads split along the last dim (as
    /// PyTorch's `x.reshape(B, L, H, D).transpose(1, 2)`). For every batch and head,
    /// softmax(q kᵀ * scale + bias) v, with `bias` [H, Lq, Lk] shared by the batch (TinyViT's
    /// relative position bias) or [B, H, Lq, Lk]. Returns [B, Lq, H*Dv] with heads merged back.
    ///
    /// Heads are read and written in place through the GEMM leading dimensions, so no head
    /// split/merge copies are made. Work is split into (batch, head, query-row block) tasks run
    /// in parallel, each with its own scores buffer.
    public static func attention(q: FloatTensor, k: FloatTensor, v: FloatTensor, heads: Int, scale: Float,
                                 bias: FloatTensor?) -> FloatTensor {
        precondition(q.shape.count == 3 && k.shape.count == 3 && v.shape.count == 3,
                     "attention: q, k, v must be [B, L, H*D], got \(q.shape), \(k.shape), \(v.shape)")
        let batch = q.shape[0], queryLength = q.shape[1], keyWidth = q.shape[2]
        let keyLength = k.shape[1], valueWidth = v.shape[2]
        precondition(k.shape[0] == batch && v.shape[0] == batch && v.shape[1] == keyLength && k.shape[2] == keyWidth,
                     "attention: incompatible q \(q.shape), k \(k.shape), v \(v.shape)")
        precondition(heads >= 1 && keyWidth % heads == 0 && valueWidth % heads == 0,
                     "attention: widths \(keyWidth), \(valueWidth) not divisible by \(heads) heads")
        let headDim = keyWidth / heads, valueHeadDim = valueWidth / heads
        var biasPerBatch = false
        if let bias {
            if bias.shape == [batch, heads, queryLength, keyLength] && batch != 1 {
                biasPerBatch = true
            } else {
                precondition(bias.count == heads * queryLength * keyLength,
                             "attention: bias \(bias.shape) must be [\(heads), \(queryLength), \(keyLength)] or [B, H, Lq, Lk]")
            }
        }
        guard batch * queryLength * valueWidth > 0 else { return FloatTensor(zeros: [batch, queryLength, valueWidth]) }
        precondition(keyLength > 0, "attention: softmax over zero keys")
        if keyLength >= longKeyThreshold && headDim <= 64 {
            return attentionLongKeys(q: q, k: k, v: v, heads: heads, scale: scale, bias: bias, biasPerBatch: biasPerBatch)
        }
        var output = zeroTensor([batch, queryLength, valueWidth])

        // Tasks are (batch, head, block of query rows), run in parallel, each doing its own
        // single-threaded sgemms. Every block re-packs its head's keys and values inside the
        // BLAS, so blocks keep at least 16 rows (long key sets: the decoder's 4096 image tokens)
        // or ~256 KB of scores; they are split further only when there are too few tasks for
        // the cores.
        configureBLAS
        var blockRows = min(queryLength, max(16, 65_536 / keyLength))
        let wantedBlocksPerHead = (2 * workerCount + batch * heads - 1) / (batch * heads)
        blockRows = max(1, min(blockRows, (queryLength + wantedBlocksPerHead - 1) / wantedBlocksPerHead))
        let blocksPerHead = (queryLength + blockRows - 1) / blockRows
        let taskCount = batch * heads * blocksPerHead

        q.data.withUnsafeBufferPointer { qBuffer in
        k.data.withUnsafeBufferPointer { kBuffer in
        v.data.withUnsafeBufferPointer { vBuffer in
        (bias?.data ?? []).withUnsafeBufferPointer { biasBuffer in
        output.data.withUnsafeMutableBufferPointer { outBuffer in
            let qBase = qBuffer.baseAddress!, kBase = kBuffer.baseAddress!, vBase = vBuffer.baseAddress!
            // An empty array may still have a base address, so decide by `bias` itself.
            let biasBase = bias == nil ? nil : biasBuffer.baseAddress, outBase = outBuffer.baseAddress!

            let runTasks = { (tasks: Range<Int>) in
                // One scores buffer per task range, reused for every (batch, head, block).
                let scores = UnsafeMutablePointer<Float>.allocate(capacity: blockRows * keyLength)
                defer { scores.deallocate() }
                for task in tasks {
                    let b = task / (heads * blocksPerHead)
                    let h = (task / blocksPerHead) % heads
                    let firstRow = (task % blocksPerHead) * blockRows
                    let rows = min(blockRows, queryLength - firstRow)

                    // scores [rows, Lk] = scale * q_bh[rows, D] * k_bhᵀ
                    BLAS.sgemm(transA: false, transB: true, m: rows, n: keyLength, k: headDim, alpha: scale,
                               a: qBase + (b * queryLength + firstRow) * keyWidth + h * headDim, lda: keyWidth,
                               b: kBase + b * keyLength * keyWidth + h * headDim, ldb: keyWidth,
                               beta: 0, c: scores, ldc: keyLength)
                    let biasHead = biasPerBatch ? b * heads + h : h
                    let biasRows = biasBase.map { $0 + (biasHead * queryLength + firstRow) * keyLength }
                    for r in 0..<rows {
                        softmaxRow(scores + r * keyLength, count: keyLength, adding: biasRows.map { $0 + r * keyLength })
                    }
                    // out_bh[rows, Dv] = scores * v_bh[Lk, Dv], written straight into the merged layout.
                    BLAS.sgemm(transA: false, transB: false, m: rows, n: valueHeadDim, k: keyLength, alpha: 1,
                               a: scores, lda: keyLength,
                               b: vBase + b * keyLength * valueWidth + h * valueHeadDim, ldb: valueWidth,
                               beta: 0, c: outBase + (b * queryLength + firstRow) * valueWidth + h * valueHeadDim,
                               ldc: valueWidth)
                }
            }
            parallelForChunks(taskCount, runTasks)
        }
        }
        }
        }
        }
        return output
    }

    /// From this many keys on, `attentionLongKeys` runs instead of BLAS calls per block.
    static let longKeyThreshold = 512
}
