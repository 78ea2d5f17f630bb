import CVectorMath

extension Kernels {
    /// Whether `AttentionKernel.queryLanes` can run here (AVX-512 in a build with `SAM_FMA`); where
    /// it cannot, asking for it runs the small-heads kernel.
    public static var queryLanesKernelAvailable: Bool { wideVectorsAvailable }

    /// Whether `attentionQueryLanes` can run a shape: AVX-512, sixteen-dim heads for keys and
    /// values, no bias.
    static func queryLanesAttentionRuns(_ s: AttentionShape, hasBias: Bool) -> Bool {
        wideVectorsAvailable && s.headDim == 16 && s.valueHeadDim == 16 && !hasBias
    }

    /// Up to this many keys `.automatic` puts many queries on the lanes (`attentionQueryLanes`, whose
    /// scratch of 16 floats per key then fits L1), beyond it the row layout (`attentionSmallHeads`).
    /// Against the row layout (4096 queries, 8 heads of 16, 2 threads, Zen 4): 7 keys 0.24 vs
    /// 0.37 ms, 22 keys 0.41 vs 0.62, 106 keys 1.55 vs 1.80, 512 keys 7.0 vs 7.6.
    static let queryLanesMaxKeys = 512

    /// The small-heads attention with sixteen queries on the vector lanes instead of sixteen keys
    /// (`sam_attention_query_lanes_avx512`), for many queries over a few keys (the decoder's image
    /// -> token attention: 4096 image tokens over the prompt's tokens). In the row layout a
    /// softmax over a few dozen keys is mostly horizontal maxima and sums; on the lanes each is a
    /// chain of vector steps. The same bits as `attentionSmallHeads`: every element keeps its
    /// order of operations. Tasks are (batch, head, block of 256 queries), each with a scratch of
    /// 16 floats per key.
    static func attentionQueryLanes(_ s: AttentionShape, q: UnsafePointer<Float>, qRowStride: Int,
                                    k: UnsafePointer<Float>, kRowStride: Int, v: UnsafePointer<Float>, vRowStride: Int,
                                    scale: Float, into out: UnsafeMutablePointer<Float>) {
        precondition(queryLanesAttentionRuns(s, hasBias: false), "attentionQueryLanes: needs AVX-512 and 16-dim heads")
        let (batch, queryLength, keyLength, heads) = (s.batch, s.queryLength, s.keyLength, s.heads)
        let valueWidth = heads * s.valueHeadDim
        let blockRows = 256, blocksPerHead = (queryLength + blockRows - 1) / blockRows
        parallelForChunks(batch * heads * blocksPerHead) { tasks in
            let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 16 * keyLength)
            defer { scratch.deallocate() }
            for task in tasks {
                let b = task / (heads * blocksPerHead), h = (task / blocksPerHead) % heads
                let firstRow = (task % blocksPerHead) * blockRows, rows = min(blockRows, queryLength - firstRow)
                sam_attention_query_lanes_avx512(q + (b * queryLength + firstRow) * qRowStride + h * s.qHeadStep, Int64(qRowStride),
                                                 Int64(rows), k + b * keyLength * kRowStride + h * s.kHeadStep, Int64(kRowStride),
                                                 v + b * keyLength * vRowStride + h * s.vHeadStep, Int64(vRowStride),
                                                 Int64(keyLength), scale, scratch,
                                                 out + (b * queryLength + firstRow) * valueWidth + h * s.valueHeadDim,
                                                 Int64(valueWidth))
            }
        }
    }
}
