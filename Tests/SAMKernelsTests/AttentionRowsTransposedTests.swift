@testable import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

@Suite("One head's attention on transposed keys")
struct AttentionRowsTransposedTests {
    /// (queries, keys, head dim, value head dim, bias): Hiera's 8x8 and 14x14 windows, TinyViT's
    /// 7x7 windows with a bias, keys not a multiple of 8, fewer queries than a six-row block.
    static let shapes = [(64, 64, 96, 96, false), (5, 196, 96, 96, false), (49, 49, 32, 32, true),
                         (4, 16, 96, 96, false), (7, 13, 8, 24, true)]

    @Test("attendRowsTransposed matches float64 attention, rows and bias rows in place", arguments: shapes)
    func matchesReference(_ shape: (Int, Int, Int, Int, Bool)) {
        let (rows, keys, headDim, valueDim, withBias) = shape
        var rng = SplitMix64(seed: UInt64(rows * 1_000 + keys))
        // q, k and v inside packed rows wider than they are, as windows read them from qkv.
        let rowWidth = 2 * headDim + valueDim + 5
        let packed = randomTensor([keys, rowWidth], in: -2...2, using: &rng)
        let biasTable = randomTensor([keys, keys], using: &rng)
        // Query r's bias row is position (keys - 1 - r): not the r-th row, as in a cropped window.
        func biasPosition(_ r: Int) -> Int { keys - 1 - r }
        let scale: Float = 0.3
        let outStride = valueDim + 3
        var out = [Float](repeating: .nan, count: rows * outStride)
        packed.data.withUnsafeBufferPointer { p in
            biasTable.data.withUnsafeBufferPointer { bias in
                out.withUnsafeMutableBufferPointer { o in
                    let base = p.baseAddress!
                    Kernels.attendRowsTransposed(rows, q: base, qStride: rowWidth, keys: keys, k: base + headDim,
                                                 kStride: rowWidth, headDim: headDim, v: base + 2 * headDim, vStride: rowWidth,
                                                 valueDim: valueDim, scale: scale,
                                                 biasRow: { r in withBias ? bias.baseAddress! + biasPosition(r) * keys : nil },
                                                 into: o.baseAddress!, outStride: outStride)
                }
            }
        }
        func columns(_ first: Int, _ width: Int, rows count: Int) -> FloatTensor {
            var data: [Float] = []
            for r in 0..<count { data += packed.data[(r * rowWidth + first)..<(r * rowWidth + first + width)] }
            return FloatTensor(shape: [1, count, width], data: data)
        }
        var bias: FloatTensor?
        if withBias {
            var data: [Float] = []
            for r in 0..<rows { data += biasTable.data[(biasPosition(r) * keys)..<((biasPosition(r) + 1) * keys)] }
            bias = FloatTensor(shape: [1, rows, keys], data: data)
        }
        let expected = AttentionTests.reference(q: columns(0, headDim, rows: rows), k: columns(headDim, headDim, rows: keys),
                                                v: columns(2 * headDim, valueDim, rows: keys), heads: 1, scale: scale, bias: bias)
        var actual: [Float] = []
        for r in 0..<rows { actual += out[(r * outStride)..<(r * outStride + valueDim)] }
        expectClose(FloatTensor(shape: [1, rows, valueDim], data: actual), expected, shape: [1, rows, valueDim],
                    "attendRowsTransposed \(shape)")
        // The row padding between outputs is not written.
        #expect((0..<rows).allSatisfy { r in out[(r * outStride + valueDim)..<((r + 1) * outStride)].allSatisfy(\.isNaN) })
    }
}
