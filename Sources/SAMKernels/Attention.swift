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
    /// Heads are read and written in place, so no head split/merge copies are made. Work is
    /// split into (batch, head, query-row block) tasks run in parallel, each with its own scores
    /// buffer. `kernel` picks the implementation (`.automatic`: by shape, see `AttentionKernel`).
    /// `precision` `.bfloat16` runs both products in bfloat16 where the CPU can (`attentionBFloat16`),
    /// whatever `kernel` says; elsewhere it is float32.
    package static func attention(q: FloatTensor, k: FloatTensor, v: FloatTensor, heads: Int, scale: Float,
                                 bias: FloatTensor?, kernel: AttentionKernel = .automatic,
                                 precision: LinearPrecision = .float32) -> FloatTensor {
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
        // Every path writes every output element, so the buffer starts uninitialised.
        let outShape = [batch, queryLength, valueWidth]
        let data = [Float](unsafeUninitializedCapacity: batch * queryLength * valueWidth) { outBuffer, initializedCount in
            q.data.withUnsafeBufferPointer { qBuffer in
            k.data.withUnsafeBufferPointer { kBuffer in
            v.data.withUnsafeBufferPointer { vBuffer in
            (bias?.data ?? []).withUnsafeBufferPointer { biasBuffer in
                // An empty array may still have a base address, so decide by `bias` itself.
                let shape = AttentionShape(batch: batch, queryLength: queryLength, keyLength: keyLength, heads: heads,
                                           headDim: headDim, valueHeadDim: valueHeadDim)
                attention(shape, kernel: kernel, precision: precision, q: qBuffer.baseAddress!, qRowStride: keyWidth,
                          k: kBuffer.baseAddress!, kRowStride: keyWidth, v: vBuffer.baseAddress!, vRowStride: valueWidth, scale: scale,
                          bias: bias == nil ? nil : biasBuffer.baseAddress, biasPerBatch: biasPerBatch,
                          into: outBuffer.baseAddress!)
            }
            }
            }
            }
            initializedCount = outBuffer.count
        }
        return FloatTensor(shape: outShape, data: data)
    }

    /// `attention` on q, k and v packed in one tensor, as a single projection makes them:
    /// qkv [B, L, H*(2*D + Dv)], laid out as `layout` says (by default all heads' queries, then
    /// keys, then values, on each row). Returns [B, L, H*Dv], heads side by side. Saves the three
    /// separate projections' passes over the input. `precision` as for `attention(q:k:v:...)`.
    package static func attention(packedQKV qkv: FloatTensor, heads: Int, keyDim: Int, valueDim: Int, scale: Float,
                                 bias: FloatTensor?, layout: PackedQKVLayout = .groupedByPart,
                                 kernel: AttentionKernel = .automatic, precision: LinearPrecision = .float32) -> FloatTensor {
        precondition(qkv.shape.count == 3 && heads >= 1 && qkv.shape[2] == heads * (2 * keyDim + valueDim),
                     "attention: packed qkv \(qkv.shape) is not [B, L, \(heads)*(2*\(keyDim)+\(valueDim))]")
        let batch = qkv.shape[0], length = qkv.shape[1], rowWidth = qkv.shape[2]
        if let bias {
            precondition(bias.count == heads * length * length,
                         "attention: bias \(bias.shape) must be [\(heads), \(length), \(length)]")
        }
        guard batch * length > 0 else { return FloatTensor(zeros: [batch, length, heads * valueDim]) }
        let data = [Float](unsafeUninitializedCapacity: batch * length * heads * valueDim) { outBuffer, initializedCount in
            qkv.data.withUnsafeBufferPointer { qkvBuffer in
            (bias?.data ?? []).withUnsafeBufferPointer { biasBuffer in
                let base = qkvBuffer.baseAddress!
                let columns = layout.columns(heads: heads, keyDim: keyDim, valueDim: valueDim)
                let shape = AttentionShape(batch: batch, queryLength: length, keyLength: length, heads: heads,
                                           headDim: keyDim, valueHeadDim: valueDim, qHeadStep: columns.q.step,
                                           kHeadStep: columns.k.step, vHeadStep: columns.v.step)
                attention(shape, kernel: kernel, precision: precision, q: base + columns.q.first, qRowStride: rowWidth,
                          k: base + columns.k.first, kRowStride: rowWidth, v: base + columns.v.first, vRowStride: rowWidth, scale: scale,
                          bias: bias == nil ? nil : biasBuffer.baseAddress, biasPerBatch: false,
                          into: outBuffer.baseAddress!)
            }
            }
            initializedCount = outBuffer.count
        }
        return FloatTensor(shape: [batch, length, heads * valueDim], data: data)
    }

    /// `attention` with queries of their own (Hiera's pooled queries) over the keys and values of a
    /// packed projection: q [B, Lq, H*D], qkv [B, Lk, H*D | H*D | H*Dv], whose query columns are not
    /// read. Returns [B, Lq, H*Dv]. The keys and values are read in place, not copied out
    /// (the copies were ~1% of SAM 2.1 tiny's encoder).
    package static func attention(q: FloatTensor, keysAndValuesOf qkv: FloatTensor, heads: Int, scale: Float,
                                 kernel: AttentionKernel = .automatic) -> FloatTensor {
        precondition(q.shape.count == 3 && qkv.shape.count == 3 && heads >= 1 && q.shape[2] % heads == 0
                     && q.shape[0] == qkv.shape[0] && qkv.shape[2] > 2 * q.shape[2] && (qkv.shape[2] - 2 * q.shape[2]) % heads == 0,
                     "attention: queries \(q.shape) and packed qkv \(qkv.shape) do not fit \(heads) heads")
        let batch = q.shape[0], queryLength = q.shape[1], keyWidth = q.shape[2]
        let keyLength = qkv.shape[1], rowWidth = qkv.shape[2], valueWidth = rowWidth - 2 * keyWidth
        guard batch * queryLength > 0 else { return FloatTensor(zeros: [batch, queryLength, valueWidth]) }
        precondition(keyLength > 0, "attention: softmax over zero keys")
        let data = [Float](unsafeUninitializedCapacity: batch * queryLength * valueWidth) { outBuffer, initializedCount in
            q.data.withUnsafeBufferPointer { qBuffer in
            qkv.data.withUnsafeBufferPointer { qkvBuffer in
                let base = qkvBuffer.baseAddress!
                let (headDim, valueHeadDim) = (keyWidth / heads, valueWidth / heads)
                let columns = PackedQKVLayout.groupedByPart.columns(heads: heads, keyDim: headDim, valueDim: valueHeadDim)
                let shape = AttentionShape(batch: batch, queryLength: queryLength, keyLength: keyLength, heads: heads,
                                           headDim: headDim, valueHeadDim: valueHeadDim)
                attention(shape, kernel: kernel, precision: .float32, q: qBuffer.baseAddress!, qRowStride: keyWidth,
                          k: base + columns.k.first, kRowStride: rowWidth, v: base + columns.v.first, vRowStride: rowWidth, scale: scale,
                          bias: nil, biasPerBatch: false, into: outBuffer.baseAddress!)
            }
            }
            initializedCount = outBuffer.count
        }
        return FloatTensor(shape: [batch, queryLength, valueWidth], data: data)
    }

    /// How a packed q|k|v projection lays out its heads on each row.
    package enum PackedQKVLayout: Sendable {
        /// All heads' queries, then all keys, then all values: SAM ViT's and Hiera's
        /// `qkv.reshape(B, N, 3, heads, -1)`.
        case groupedByPart
        /// Each head's query, key and value side by side (q₀ k₀ v₀ q₁ k₁ v₁ ...): TinyViT's
        /// `qkv.view(B, N, heads, -1).split([key_dim, key_dim, d], dim=3)`, so its qkv weight
        /// is used as stored.
        case interleavedByHead

        /// The columns of head 0's queries, keys and values, and the step from one head to the next.
        func columns(heads: Int, keyDim: Int, valueDim: Int) -> (q: HeadColumns, k: HeadColumns, v: HeadColumns) {
            switch self {
            case .groupedByPart:
                (HeadColumns(first: 0, step: keyDim), HeadColumns(first: heads * keyDim, step: keyDim),
                 HeadColumns(first: 2 * heads * keyDim, step: valueDim))
            case .interleavedByHead:
                (HeadColumns(first: 0, step: 2 * keyDim + valueDim), HeadColumns(first: keyDim, step: 2 * keyDim + valueDim),
                 HeadColumns(first: 2 * keyDim, step: 2 * keyDim + valueDim))
            }
        }
    }

    /// Head h's first column of a part (queries, keys or values) is first + h * step.
    struct HeadColumns {
        let first: Int, step: Int
        @inline(__always) func of(head h: Int) -> Int { first + h * step }
    }

    struct AttentionShape {
        let batch: Int, queryLength: Int, keyLength: Int, heads: Int, headDim: Int, valueHeadDim: Int
        /// Columns from one head's queries (keys, values) to the next's on a row: headDim (valueHeadDim)
        /// where heads sit side by side, more where the heads of a packed row are interleaved.
        let qHeadStep: Int, kHeadStep: Int, vHeadStep: Int

        init(batch: Int, queryLength: Int, keyLength: Int, heads: Int, headDim: Int, valueHeadDim: Int,
             qHeadStep: Int? = nil, kHeadStep: Int? = nil, vHeadStep: Int? = nil) {
            (self.batch, self.queryLength, self.keyLength, self.heads) = (batch, queryLength, keyLength, heads)
            (self.headDim, self.valueHeadDim) = (headDim, valueHeadDim)
            self.qHeadStep = qHeadStep ?? headDim
            self.kHeadStep = kHeadStep ?? headDim
            self.vHeadStep = vHeadStep ?? valueHeadDim
        }
    }

    /// Which implementation `attention` runs. Both compute the same function (SAMKernelsTests
    /// check each against a float64 reference) and write every output element.
    package enum AttentionKernel: Sendable {
        /// `.smallHeads` for heads of at most 64 dims with many queries (>= 512), or many keys
        /// (>= 512) and at least 16 queries: the decoder's cross attentions, where it measured
        /// 1.3-2x faster than the BLAS path (`sambench attention`). `.blas` otherwise: TinyViT's
        /// 7x7 and 14x14 windows, where the two were level and the BLAS path was faster in the
        /// whole encoder, and few queries over many keys, where transposing every key costs
        /// more than it saves.
        case automatic
        /// Two sgemms per (head, block of query rows) around a softmax.
        case blas
        /// Register-blocked products for narrow heads (`attentionSmallHeads`).
        case smallHeads
        /// Keys and values packed once per head, panel products per block of query rows
        /// (`attentionPanels`; CPUs with AVX-512, the BLAS path elsewhere). Automatic for heads wider
        /// than 64 dims over at least 1024 keys where `float32LinearKernel` is `.panels`.
        case panels
        /// Sixteen queries on the vector lanes (`attentionQueryLanes`; AVX-512, heads of 16 dims, no
        /// bias; the small-heads kernel elsewhere). Automatic for at least 512 queries over at most
        /// `queryLanesMaxKeys` keys: the decoder's image -> token attention.
        case queryLanes
    }

    static func attention(_ s: AttentionShape, kernel: AttentionKernel, precision: LinearPrecision, q: UnsafePointer<Float>,
                                  qRowStride: Int, k: UnsafePointer<Float>, kRowStride: Int, v: UnsafePointer<Float>, vRowStride: Int,
                                  scale: Float, bias: UnsafePointer<Float>?, biasPerBatch: Bool,
                                  into out: UnsafeMutablePointer<Float>) {
        // `.bfloat16` where the CPU can, whatever `kernel` says.
        if bfloat16AttentionRuns(precision) {
            attentionBFloat16(s, q: q, qRowStride: qRowStride, k: k, kRowStride: kRowStride, v: v, vRowStride: vRowStride,
                              scale: scale, bias: bias, biasPerBatch: biasPerBatch, into: out)
            return
        }
        let queryLanesRun = queryLanesAttentionRuns(s, hasBias: bias != nil)
        if queryLanesRun && (kernel == .queryLanes
                             || (kernel == .automatic && s.queryLength >= 512 && s.keyLength <= queryLanesMaxKeys)) {
            attentionQueryLanes(s, q: q, qRowStride: qRowStride, k: k, kRowStride: kRowStride, v: v, vRowStride: vRowStride,
                                scale: scale, into: out)
            return
        }
        let useSmallHeads = switch kernel {
        case .automatic:
            s.headDim <= 64 && s.valueHeadDim <= 64
                && (s.queryLength >= 512 || (s.keyLength >= 512 && s.queryLength >= 16))
        case .blas, .panels: false
        case .smallHeads, .queryLanes: true
        }
        let usePanels = panelAttentionAvailable
            && (kernel == .panels || (kernel == .automatic && !useSmallHeads && panelAttentionPays(s)))
        if usePanels {
            attentionPanels(s, q: q, qRowStride: qRowStride, k: k, kRowStride: kRowStride, v: v, vRowStride: vRowStride,
                            scale: scale, bias: bias, biasPerBatch: biasPerBatch, into: out)
        } else if useSmallHeads {
            attentionSmallHeads(s, q: q, qRowStride: qRowStride, k: k, kRowStride: kRowStride, v: v, vRowStride: vRowStride,
                                scale: scale, bias: bias, biasPerBatch: biasPerBatch, into: out)
        } else {
            attentionBLAS(s, q: q, qRowStride: qRowStride, k: k, kRowStride: kRowStride, v: v, vRowStride: vRowStride,
                          scale: scale, bias: bias, biasPerBatch: biasPerBatch, into: out)
        }
    }

    /// The BLAS path: row r of batch b's queries is at q + (b*Lq + r) * qRowStride, head h at
    /// + h * qHeadStep (keys and values likewise); the output [B, Lq, H*Dv] is written in full (every task
    /// stores its rows with beta = 0), so callers need not initialise it.
    ///
    /// Tasks are (batch, head, block of query rows), run in parallel, each doing its own
    /// single-threaded sgemms (the BLAS re-packs the head's keys and values per block, which is
    /// cheap for the short key sets that come here). Blocks keep a task's scores within ~256 KB
    /// (L2), at least 16 rows, and are split further only when there are too few tasks for the cores.
    private static func attentionBLAS(_ s: AttentionShape, q: UnsafePointer<Float>, qRowStride: Int,
                                      k: UnsafePointer<Float>, kRowStride: Int, v: UnsafePointer<Float>, vRowStride: Int,
                                      scale: Float, bias: UnsafePointer<Float>?, biasPerBatch: Bool,
                                      into out: UnsafeMutablePointer<Float>) {
        let (batch, queryLength, keyLength, heads) = (s.batch, s.queryLength, s.keyLength, s.heads)
        let (headDim, valueHeadDim) = (s.headDim, s.valueHeadDim)
        let valueWidth = heads * valueHeadDim
        forEachAttentionBlock(batch: batch, heads: heads, queryLength: queryLength, scratchPerRow: keyLength,
                              preferredRows: blasBlockRows(keyLength: keyLength, headDim: headDim)) { scores, b, h, firstRow, rows in
            let biasHead = biasPerBatch ? b * heads + h : h
            let biasRows = bias.map { $0 + (biasHead * queryLength + firstRow) * keyLength }
            // Written straight into the merged layout.
            attendRows(rows, q: q + (b * queryLength + firstRow) * qRowStride + h * s.qHeadStep, qStride: qRowStride,
                       keys: keyLength, k: k + b * keyLength * kRowStride + h * s.kHeadStep, kStride: kRowStride, headDim: headDim,
                       v: v + b * keyLength * vRowStride + h * s.vHeadStep, vStride: vRowStride, valueDim: valueHeadDim,
                       scale: scale, biasRow: { r in biasRows.map { $0 + r * keyLength } }, scores: scores,
                       into: out + (b * queryLength + firstRow) * valueWidth + h * valueHeadDim, outStride: valueWidth)
        }
    }

    /// Query rows per BLAS-path block: scores within ~256 KB, at least 16 rows. Wide heads over many
    /// keys (Hiera's global blocks: 96-dim heads over 4096 tokens) take 128: every block re-packs the
    /// head's keys and values (1.5 MB each there), which 16 rows of products did not repay
    /// (`sambench attention`, SAM 2.1 tiny's global block: 839 ms at 16 rows, 572 ms at 128, level
    /// from 64 to 512). Narrower heads keep the 16-row rule (SAM's decoder and TinyViT's windows).
    static func blasBlockRows(keyLength: Int, headDim: Int) -> Int {
        let rows = max(16, 65_536 / keyLength)
        return headDim > 64 && keyLength >= 1024 ? max(rows, 128) : rows
    }

    /// One head's attention for `rows` queries: scores [rows, keys] = scale * q kᵀ, a softmax on
    /// each row r after adding `biasRow(r)` (nil: none), out [rows, Dv] = scores v. Rows of q, k, v
    /// and out are their strides apart; `scores` holds rows * keys floats (the sgemm path's scratch;
    /// the other makes its own, with room for padded rows and the transposed keys).
    ///
    /// Two single-threaded sgemms, or on AVX-512 CPUs (`attendRowsTransposedPays`) the small-heads
    /// kernels: the keys transposed into scratch, both products on `sam_rows_product_avx512`, the
    /// softmax's division applied as the values are summed. On windows (a few dozen to a few hundred
    /// keys) each sgemm call packs its operands, which cost as much as the products.
    @inline(__always)
    static func attendRows(_ rows: Int, q: UnsafePointer<Float>, qStride: Int, keys: Int, k: UnsafePointer<Float>,
                           kStride: Int, headDim: Int, v: UnsafePointer<Float>, vStride: Int, valueDim: Int, scale: Float,
                           biasRow: (Int) -> UnsafePointer<Float>?, scores: UnsafeMutablePointer<Float>,
                           into out: UnsafeMutablePointer<Float>, outStride: Int) {
        if attendRowsTransposedPays(keys: keys, valueDim: valueDim) {
            attendRowsTransposed(rows, q: q, qStride: qStride, keys: keys, k: k, kStride: kStride, headDim: headDim,
                                 v: v, vStride: vStride, valueDim: valueDim, scale: scale, biasRow: biasRow,
                                 into: out, outStride: outStride)
            return
        }
        BLAS.sgemm(transA: false, transB: true, m: rows, n: keys, k: headDim, alpha: scale,
                   a: q, lda: qStride, b: k, ldb: kStride, beta: 0, c: scores, ldc: keys)
        for r in 0..<rows { softmaxRow(scores + r * keys, count: keys, adding: biasRow(r)) }
        BLAS.sgemm(transA: false, transB: false, m: rows, n: valueDim, k: keys, alpha: 1,
                   a: scores, lda: keys, b: v, ldb: vStride, beta: 0, c: out, ldc: outStride)
    }
}
