import CVectorMath
import Foundation
import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

/// `sam_attention_query_lanes_avx512` (sixteen queries on the vector lanes, `AttentionKernel.queryLanes`)
/// keeps the row layout's order of operations for every element, so it must give the bits of the
/// row layout's AVX-512 kernels (`sam_rows_product_avx512` around `sam_softmax_numerators_avx512`,
/// what `.smallHeads` runs in builds with SAM_FMA), not merely close values. Called directly, so
/// the debug build's tests run it too.
@Suite("Attention with queries on the lanes", .enabled(if: sam_vector_math_has_avx512() != 0, "this CPU has no AVX-512"))
struct QueryLanesAttentionTests {
    /// One head of 16 dims: q [rows, qStride], k and v [keys, kvStride], the head at column 0.
    struct Head {
        let rows: Int, keys: Int, qStride: Int, kvStride: Int
        var q: [Float], k: [Float], v: [Float]

        init(rows: Int, keys: Int, qStride: Int, kvStride: Int, seed: UInt64) {
            var rng = SplitMix64(seed: seed)
            (self.rows, self.keys, self.qStride, self.kvStride) = (rows, keys, qStride, kvStride)
            q = randomTensor([rows * qStride], in: -3...3, using: &rng).data
            k = randomTensor([keys * kvStride], in: -3...3, using: &rng).data
            v = randomTensor([keys * kvStride], using: &rng).data
        }

        /// Output rows 16 apart, by the lanes kernel.
        func onLanes(scale: Float) -> [Float] {
            var out = [Float](repeating: .nan, count: rows * 16), scratch = [Float](repeating: 0, count: 16 * keys)
            sam_attention_query_lanes_avx512(q, Int64(qStride), Int64(rows), k, Int64(kvStride), v, Int64(kvStride),
                                             Int64(keys), scale, &scratch, &out, 16)
            return out
        }

        /// The same by the row layout: transposed keys zero-padded to whole vectors, scaled scores,
        /// the padding set to -inf, the softmax's numerators, the values scaled by 1 / row sums.
        func inRows(scale: Float) -> [Float] {
            let padded = (keys + 7) & ~7
            var keysT = [Float](repeating: 0, count: 16 * padded)
            for j in 0..<keys { for d in 0..<16 { keysT[d * padded + j] = k[j * kvStride + d] } }
            var scores = [Float](repeating: 0, count: rows * padded), inverseSums = [Float](repeating: 0, count: rows)
            var scaleValue = scale
            sam_rows_product_avx512(q, Int64(qStride), Int64(rows), 16, keysT, Int64(padded), Int64(padded),
                                    &scaleValue, 0, &scores, Int64(padded))
            for r in 0..<rows { for j in keys..<padded { scores[r * padded + j] = -.infinity } }
            sam_softmax_numerators_avx512(&scores, Int64(rows), Int64(padded), &inverseSums)
            var out = [Float](repeating: .nan, count: rows * 16)
            sam_rows_product_avx512(scores, Int64(padded), Int64(rows), Int64(keys), v, Int64(kvStride), 16,
                                    inverseSums, 1, &out, 16)
            return out
        }
    }

    /// (rows, keys): the decoder's image -> token shapes at 1, 16 and 100 points (7, 22, 106 keys),
    /// row counts off multiples of 16, key counts off multiples of 4 and 8, one key, and keys up to
    /// the automatic limit.
    static let shapes: [(Int, Int)] = [(4096, 7), (1031, 22), (611, 106), (17, 1), (530, 37), (300, 512), (5, 13)]

    @Test("gives the row layout's bits", arguments: shapes)
    func sameBitsAsRowLayout(_ shape: (Int, Int)) {
        let head = Head(rows: shape.0, keys: shape.1, qStride: 48, kvStride: 32, seed: UInt64(shape.0 * 1000 + shape.1))
        let lanes = head.onLanes(scale: 0.25)
        #expect(lanes == head.inRows(scale: 0.25), "\(shape)")
        // And it is attention: row 0 against float64.
        var scores = (0..<head.keys).map { j in 0.25 * (0..<16).reduce(0.0) { $0 + Double(head.q[$1]) * Double(head.k[j * 32 + $1]) } }
        let largest = scores.max()!
        scores = scores.map { Foundation.exp($0 - largest) }
        let total = scores.reduce(0, +)
        for c in 0..<16 {
            let expected = (0..<head.keys).reduce(0.0) { $0 + scores[$1] * Double(head.v[$1 * 32 + c]) } / total
            #expect(abs(Double(lanes[c]) - expected) < 1e-5, "\(shape), value \(c)")
        }
    }

    @Test("a query whose scores overflow leaves its neighbours on the lanes alone")
    func extremeScoresStayInTheirLanes() {
        var head = Head(rows: 32, keys: 9, qStride: 16, kvStride: 16, seed: 92)
        for d in 0..<16 { head.q[5 * 16 + d] = 3e38 }  // query 5's scores overflow to ±inf
        let lanes = head.onLanes(scale: 1), rows = head.inRows(scale: 1)
        for query in 0..<32 where query != 5 {
            let range = (query * 16)..<(query * 16 + 16)
            #expect(Array(lanes[range]) == Array(rows[range]), "query \(query)")
            #expect(lanes[range].allSatisfy { $0.isFinite }, "query \(query)")
        }
    }
}
