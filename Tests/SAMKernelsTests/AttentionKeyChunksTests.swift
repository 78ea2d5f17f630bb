@testable import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

@Suite("Attention over keys in chunks (running softmax)", .enabled(if: Kernels.panelAttentionAvailable, "the panel attention needs AVX-512"))
struct AttentionKeyChunksTests {
    /// The chunked panel path on tensors [B, L, H*D], with chunks and row blocks small enough to
    /// give several of each on small shapes.
    static func chunked(q: FloatTensor, k: FloatTensor, v: FloatTensor, heads: Int, scale: Float, bias: FloatTensor?,
                        chunk: Int, rows: Int) -> FloatTensor {
        let (batch, queryLength, keyLength) = (q.shape[0], q.shape[1], k.shape[1])
        let headDim = q.shape[2] / heads, valueHeadDim = v.shape[2] / heads
        let shape = Kernels.AttentionShape(batch: batch, queryLength: queryLength, keyLength: keyLength, heads: heads,
                                           headDim: headDim, valueHeadDim: valueHeadDim)
        var out = [Float](repeating: .nan, count: batch * queryLength * heads * valueHeadDim)
        q.data.withUnsafeBufferPointer { qp in
        k.data.withUnsafeBufferPointer { kp in
        v.data.withUnsafeBufferPointer { vp in
        out.withUnsafeMutableBufferPointer { op in
            func run(_ biasPointer: UnsafePointer<Float>?) {
                Kernels.attentionPanelsByKeyChunks(shape, q: qp.baseAddress!, qRowStride: q.shape[2], k: kp.baseAddress!,
                                                   kRowStride: k.shape[2], v: vp.baseAddress!, vRowStride: v.shape[2],
                                                   scale: scale, bias: biasPointer, biasPerBatch: bias?.shape.count == 4,
                                                   into: op.baseAddress!, chunk: chunk, preferredRows: rows)
            }
            if let bias { bias.data.withUnsafeBufferPointer { run($0.baseAddress!) } } else { run(nil) }
        }
        }
        }
        }
        return FloatTensor(shape: [batch, queryLength, heads * valueHeadDim], data: out)
    }

    /// (batch, queries, keys, heads, head dim, value head dim, bias rank, chunk, rows per block):
    /// a short last chunk and a short last key panel (200 = 3 x 64 + 8), row blocks not a multiple of
    /// twelve, per-batch bias; one chunk only; SAM 2's memory attention's shape in small (one head
    /// wider than its values, no bias).
    static let shapes = [(2, 29, 200, 2, 8, 12, 4, 64, 7), (1, 13, 96, 3, 16, 16, 3, 128, 12),
                         (1, 40, 300, 1, 64, 16, 0, 32, 24)]

    @Test("matches float64 attention", arguments: shapes)
    func matchesReference(_ c: (Int, Int, Int, Int, Int, Int, Int, Int, Int)) {
        let (batch, queries, keys, heads, headDim, valueHeadDim, biasRank, chunk, rows) = c
        var rng = SplitMix64(seed: UInt64(queries * 1_000 + keys))
        let q = randomTensor([batch, queries, heads * headDim], using: &rng)
        let k = randomTensor([batch, keys, heads * headDim], using: &rng)
        let v = randomTensor([batch, keys, heads * valueHeadDim], using: &rng)
        let bias: FloatTensor? = switch biasRank {
        case 3: randomTensor([heads, queries, keys], in: -2...2, using: &rng)
        case 4: randomTensor([batch, heads, queries, keys], in: -2...2, using: &rng)
        default: nil
        }
        // Peaked softmaxes: a row's maximum moves from chunk to chunk, so the carried rescaling matters.
        let scale: Float = 2 / Float(headDim).squareRoot()
        let out = Self.chunked(q: q, k: k, v: v, heads: heads, scale: scale, bias: bias, chunk: chunk, rows: rows)
        expectClose(out, AttentionTests.reference(q: q, k: k, v: v, heads: heads, scale: scale, bias: bias),
                    shape: [batch, queries, heads * valueHeadDim], "attention by key chunks \(c)")
    }

    @Test("keys masked with -inf over whole chunks weigh nothing: attention over the other keys")
    func maskedChunks() {
        var rng = SplitMix64(seed: 77)
        let (queries, keys, headDim, chunk) = (9, 160, 8, 32)
        let q = randomTensor([1, queries, headDim], using: &rng)
        let k = randomTensor([1, keys, headDim], using: &rng)
        let v = randomTensor([1, keys, headDim], using: &rng)
        // The first chunk and the fourth masked for every query: the running maximum starts at -inf
        // and a later chunk carries nothing.
        let masked = Set(Array(0..<chunk) + Array(3 * chunk..<4 * chunk))
        let bias = FloatTensor(shape: [1, queries, keys],
                               data: (0..<queries * keys).map { masked.contains($0 % keys) ? -.infinity : 0 })
        let out = Self.chunked(q: q, k: k, v: v, heads: 1, scale: 0.7, bias: bias, chunk: chunk, rows: 5)
        let kept = (0..<keys).filter { !masked.contains($0) }
        func keptRows(_ t: FloatTensor) -> FloatTensor {
            FloatTensor(shape: [1, kept.count, headDim], data: kept.flatMap { t.data[($0 * headDim)..<(($0 + 1) * headDim)] })
        }
        expectClose(out, AttentionTests.reference(q: q, k: keptRows(k), v: keptRows(v), heads: 1, scale: 0.7, bias: nil),
                    shape: [1, queries, headDim], "attention by key chunks, masked chunks")
    }

    @Test("attention takes the chunks on long keys over wide heads, and gives what whole score rows give")
    func dispatch() {
        let long = Kernels.AttentionShape(batch: 1, queryLength: 8, keyLength: 2_080, heads: 1, headDim: 256, valueHeadDim: 64)
        #expect(Kernels.attentionByKeyChunksPays(long))
        #expect(!Kernels.attentionByKeyChunksPays(Kernels.AttentionShape(batch: 1, queryLength: 4096, keyLength: 4096, heads: 4,
                                                                          headDim: 96, valueHeadDim: 96)))
        var rng = SplitMix64(seed: 5)
        let q = randomTensor([1, 8, 256], using: &rng), k = randomTensor([1, 2_080, 256], using: &rng)
        let v = randomTensor([1, 2_080, 64], using: &rng)
        let out = Kernels.attention(q: q, k: k, v: v, heads: 1, scale: 1 / 16, bias: nil, kernel: .panels)
        let chunked = Self.chunked(q: q, k: k, v: v, heads: 1, scale: 1 / 16, bias: nil,
                                   chunk: Kernels.attentionKeyChunk, rows: Kernels.attentionKeyChunkRows)
        #expect(out.data == chunked.data)
    }
}
