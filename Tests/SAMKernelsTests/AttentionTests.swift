import Foundation
import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

struct AttentionCase: CustomTestStringConvertible, Sendable {
    let name: String
    let batch: Int, queryLength: Int, keyLength: Int, heads: Int, headDim: Int, valueHeadDim: Int
    /// nil: no bias; 3: [H, Lq, Lk]; 4: [B, H, Lq, Lk]
    let biasRank: Int?
    var testDescription: String { name }
}

@Suite("Attention")
struct AttentionTests {
    /// Per batch and head, with heads taken from slices of the last dim:
    /// out[b, i, h*Dv + d] = sum_j softmax_j(scale * q_h[i] . k_h[j] + bias[h, i, j]) * v_h[j, d].
    static func reference(q: FloatTensor, k: FloatTensor, v: FloatTensor, heads: Int, scale: Float,
                          bias: FloatTensor?) -> [Expected] {
        reference(q: q, k: k.exact, keyShape: k.shape, v: v, heads: heads, scale: scale, bias: bias)
    }

    /// The same with keys that carry errors of their own (a projection's output).
    static func reference(q: FloatTensor, k: [Expected], keyShape: [Int], v: FloatTensor, heads: Int, scale: Float,
                          bias: FloatTensor?) -> [Expected] {
        reference(q: q, k: k, keyShape: keyShape, v: v.exact, valueShape: v.shape, heads: heads, scale: scale, bias: bias)
    }

    /// The same with keys and values that carry errors of their own.
    static func reference(q: FloatTensor, k: [Expected], keyShape: [Int], v: [Expected], valueShape: [Int], heads: Int,
                          scale: Float, bias: FloatTensor?) -> [Expected] {
        let (batch, lq, width) = (q.shape[0], q.shape[1], q.shape[2])
        let lk = keyShape[1], valueWidth = valueShape[2]
        let d = width / heads, dv = valueWidth / heads
        var out = [Expected](repeating: .zero, count: batch * lq * valueWidth)
        for b in 0..<batch {
            for h in 0..<heads {
                for i in 0..<lq {
                    var scores = [Expected](repeating: .zero, count: lk)
                    for j in 0..<lk {
                        var dot = Expected.zero
                        for e in 0..<d {
                            dot += Expected(exact: q.data[(b * lq + i) * width + h * d + e]) * k[(b * lk + j) * width + h * d + e]
                        }
                        scores[j] = dot * Expected(exact: scale)
                        if let bias {
                            let biasHead = bias.shape.count == 4 ? b * heads + h : h
                            scores[j] += Expected(exact: bias.data[(biasHead * lq + i) * lk + j])
                        }
                    }
                    // Softmax is shift-invariant, so the maximum enters as an exact constant; the
                    // kernels' vector exp is within 2 ulp.
                    let maxScore = Expected(exact: scores.map(\.value).max()!)
                    let exps = scores.map { ($0 - maxScore).exp(withinULPs: 2) }
                    let total = exps.reduce(Expected.zero, +)
                    for e in 0..<dv {
                        var sum = Expected.zero
                        for j in 0..<lk { sum += exps[j] / total * v[(b * lk + j) * valueWidth + h * dv + e] }
                        out[(b * lq + i) * valueWidth + h * dv + e] = sum
                    }
                }
            }
        }
        return out
    }

    /// The panel path, on CPUs that run it (`.automatic` takes it only for wide heads over many keys).
    static let panelKernel: [Kernels.AttentionKernel] = Kernels.panelAttentionAvailable ? [.panels] : []

    static let cases: [AttentionCase] = [
        AttentionCase(name: "3 batches, Lq 13, Lk 11, 3 heads, bias [H, Lq, Lk]",
                      batch: 3, queryLength: 13, keyLength: 11, heads: 3, headDim: 5, valueHeadDim: 5, biasRank: 3),
        AttentionCase(name: "per-batch bias [B, H, Lq, Lk], value dim differs",
                      batch: 2, queryLength: 7, keyLength: 9, heads: 2, headDim: 6, valueHeadDim: 4, biasRank: 4),
        AttentionCase(name: "no bias, single head",
                      batch: 1, queryLength: 5, keyLength: 3, heads: 1, headDim: 8, valueHeadDim: 8, biasRank: nil),
        AttentionCase(name: "TinyViT 7x7 windows: 40 windows, L 49, 4 heads of 16",
                      batch: 40, queryLength: 49, keyLength: 49, heads: 4, headDim: 16, valueHeadDim: 16, biasRank: 3),
        AttentionCase(name: "decoder image-to-token: Lq 1031 tokens, Lk 7, row blocks",
                      batch: 1, queryLength: 1031, keyLength: 7, heads: 2, headDim: 16, valueHeadDim: 16, biasRank: nil),
        AttentionCase(name: "decoder image-to-token on the lanes: Lq 530, Lk 37, 3 heads",
                      batch: 1, queryLength: 530, keyLength: 37, heads: 3, headDim: 16, valueHeadDim: 16, biasRank: nil),
        AttentionCase(name: "decoder token-to-image, long keys (small-heads path): Lq 13, Lk 1029, Dv 12",
                      batch: 1, queryLength: 13, keyLength: 1_029, heads: 3, headDim: 16, valueHeadDim: 12, biasRank: 3),
        AttentionCase(name: "long keys, 2 batches, per-batch bias, rows not a multiple of 4",
                      batch: 2, queryLength: 6, keyLength: 600, heads: 2, headDim: 8, valueHeadDim: 16, biasRank: 4),
        AttentionCase(name: "many queries (not a multiple of 6), keys past the last 16 (106), bias [H, Lq, Lk]",
                      batch: 1, queryLength: 611, keyLength: 106, heads: 2, headDim: 16, valueHeadDim: 16, biasRank: 3),
        AttentionCase(name: "one query row above the BLAS threading threshold (serial tasks)",
                      batch: 1, queryLength: 3, keyLength: 2_113, heads: 2, headDim: 128, valueHeadDim: 128, biasRank: nil),
        AttentionCase(name: "Hiera global block: wide heads over many keys, 128-row blocks and a short last one",
                      batch: 1, queryLength: 300, keyLength: 1_100, heads: 2, headDim: 72, valueHeadDim: 72, biasRank: nil),
    ]

    @Test("attention matches per-head softmax(q kᵀ * scale + bias) v", arguments: cases)
    func matchesReference(_ c: AttentionCase) {
        var rng = SplitMix64(seed: UInt64(c.queryLength * 1000 + c.keyLength))
        let q = randomTensor([c.batch, c.queryLength, c.heads * c.headDim], using: &rng)
        let k = randomTensor([c.batch, c.keyLength, c.heads * c.headDim], using: &rng)
        let v = randomTensor([c.batch, c.keyLength, c.heads * c.valueHeadDim], using: &rng)
        let bias: FloatTensor? = switch c.biasRank {
        case 3: randomTensor([c.heads, c.queryLength, c.keyLength], in: -2...2, using: &rng)
        case 4: randomTensor([c.batch, c.heads, c.queryLength, c.keyLength], in: -2...2, using: &rng)
        default: nil
        }
        // A scale above 1/sqrt(D) gives peaked softmaxes, so wrong pairings show up clearly.
        let scale: Float = 1.5 / Float(c.headDim).squareRoot()
        let expected = Self.reference(q: q, k: k, v: v, heads: c.heads, scale: scale, bias: bias)
        // Every kernel on every shape, not only the one `.automatic` picks for it.
        for kernel in [Kernels.AttentionKernel.automatic, .blas, .smallHeads, .queryLanes] + AttentionTests.panelKernel {
            let out = Kernels.attention(q: q, k: k, v: v, heads: c.heads, scale: scale, bias: bias, kernel: kernel)
            expectClose(out, expected, shape: [c.batch, c.queryLength, c.heads * c.valueHeadDim], "attention \(c.name), \(kernel)")
        }
    }
}

@Suite("Attention on packed q|k|v")
struct PackedAttentionTests {
    @Test("equals attention on the three parts, bit for bit")
    func packedEqualsSeparate() {
        var rng = SplitMix64(seed: 77)
        let (batch, length, heads, keyDim, valueDim) = (3, 49, 4, 8, 6)
        let rowWidth = heads * (2 * keyDim + valueDim)
        let packed = randomTensor([batch, length, rowWidth], using: &rng)
        let bias = randomTensor([heads, length, length], using: &rng)
        func part(_ offset: Int, _ width: Int) -> FloatTensor {
            var data: [Float] = []
            for row in 0..<(batch * length) { data += packed.data[(row * rowWidth + offset)..<(row * rowWidth + offset + width)] }
            return FloatTensor(shape: [batch, length, width], data: data)
        }
        let q = part(0, heads * keyDim), k = part(heads * keyDim, heads * keyDim), v = part(2 * heads * keyDim, heads * valueDim)
        for kernel in [Kernels.AttentionKernel.blas, .smallHeads] + AttentionTests.panelKernel {
            let separate = Kernels.attention(q: q, k: k, v: v, heads: heads, scale: 0.3, bias: bias, kernel: kernel)
            let fromPacked = Kernels.attention(packedQKV: packed, heads: heads, keyDim: keyDim, valueDim: valueDim, scale: 0.3,
                                               bias: bias, kernel: kernel)
            #expect(fromPacked.shape == separate.shape)
            #expect(fromPacked.data == separate.data, "\(kernel)")
        }
    }

    /// Rows of q₀…q_H k₀…k_H v₀…v_H columns rearranged as q₀ k₀ v₀ q₁ k₁ v₁ … (TinyViT's qkv output).
    static func interleavedByHead(_ grouped: FloatTensor, heads: Int, keyDim: Int, valueDim: Int) -> FloatTensor {
        let rowWidth = heads * (2 * keyDim + valueDim), rows = grouped.count / rowWidth
        var data: [Float] = []
        for row in 0..<rows {
            let start = row * rowWidth
            for h in 0..<heads {
                let query = start + h * keyDim, key = start + (heads + h) * keyDim
                let value = start + 2 * heads * keyDim + h * valueDim
                data += grouped.data[query..<(query + keyDim)]
                data += grouped.data[key..<(key + keyDim)]
                data += grouped.data[value..<(value + valueDim)]
            }
        }
        return FloatTensor(shape: grouped.shape, data: data)
    }

    @Test("heads interleaved q|k|v per head give what grouped rows give, bit for bit")
    func interleavedEqualsGrouped() {
        var rng = SplitMix64(seed: 79)
        // TinyViT's window shape, and one long enough for the small-heads kernel.
        for (batch, length, heads, keyDim, valueDim) in [(3, 49, 4, 8, 6), (1, 530, 2, 16, 16)] {
            let grouped = randomTensor([batch, length, heads * (2 * keyDim + valueDim)], using: &rng)
            let bias = randomTensor([heads, length, length], using: &rng)
            let interleaved = Self.interleavedByHead(grouped, heads: heads, keyDim: keyDim, valueDim: valueDim)
            for kernel in [Kernels.AttentionKernel.blas, .smallHeads] + AttentionTests.panelKernel {
                let expected = Kernels.attention(packedQKV: grouped, heads: heads, keyDim: keyDim, valueDim: valueDim, scale: 0.3,
                                                 bias: bias, kernel: kernel)
                let out = Kernels.attention(packedQKV: interleaved, heads: heads, keyDim: keyDim, valueDim: valueDim, scale: 0.3,
                                            bias: bias, layout: .interleavedByHead, kernel: kernel)
                #expect(out.data == expected.data, "\(kernel), \(length) tokens")
            }
        }
    }

    @Test("queries of their own over packed keys and values equal attention on the parts, bit for bit")
    func ownQueriesOverPackedKeysAndValues() {
        var rng = SplitMix64(seed: 78)
        // Hiera's pooled windows: 4 queries over 16 keys, and a shape for the small-heads kernel.
        for (batch, queries, keys, heads, keyDim, valueDim) in [(5, 4, 16, 2, 12, 12), (1, 520, 40, 2, 8, 8)] {
            let rowWidth = heads * (2 * keyDim + valueDim)
            let packed = randomTensor([batch, keys, rowWidth], using: &rng)
            let q = randomTensor([batch, queries, heads * keyDim], using: &rng)
            func part(_ offset: Int, _ width: Int) -> FloatTensor {
                var data: [Float] = []
                for row in 0..<(batch * keys) { data += packed.data[(row * rowWidth + offset)..<(row * rowWidth + offset + width)] }
                return FloatTensor(shape: [batch, keys, width], data: data)
            }
            let k = part(heads * keyDim, heads * keyDim), v = part(2 * heads * keyDim, heads * valueDim)
            for kernel in [Kernels.AttentionKernel.automatic, .blas, .smallHeads] + AttentionTests.panelKernel {
                let separate = Kernels.attention(q: q, k: k, v: v, heads: heads, scale: 0.4, bias: nil, kernel: kernel)
                let inPlace = Kernels.attention(q: q, keysAndValuesOf: packed, heads: heads, scale: 0.4, kernel: kernel)
                #expect(inPlace.shape == [batch, queries, heads * valueDim])
                #expect(inPlace.data == separate.data, "\(kernel), \(queries) queries")
            }
        }
    }
}

@Suite("Window attention on the token grid")
struct WindowAttentionTests {
    /// (batch, height, width, window): windows overhanging right and bottom, a window larger
    /// than the whole grid, and a grid the window divides exactly.
    static let grids = [(2, 9, 11, 4), (1, 5, 3, 7), (1, 8, 8, 4)]

    /// Upstream's recipe, literally: pad the token grid with `padding` rows, cut it into windows,
    /// attend inside each window (float64 reference), put the windows back and crop.
    @Test("equals attention on padded windows, reversed and cropped, with a position bias and without (Hiera)",
          arguments: grids, [true, false])
    func matchesPaddedWindows(_ g: (Int, Int, Int, Int), withBias: Bool) {
        let (batch, height, width, window) = g
        let (heads, keyDim, valueDim) = (3, 4, 5)
        let rowWidth = heads * (2 * keyDim + valueDim), positions = window * window
        var rng = SplitMix64(seed: UInt64(height * 100 + width))
        let qkv = randomTensor([batch, height * width, rowWidth], using: &rng)
        let padding = randomTensor([rowWidth], using: &rng)
        let drawnBias = randomTensor([heads, positions, positions], in: -2...2, using: &rng)
        let bias = withBias ? drawnBias : nil
        let grid = Kernels.WindowGrid(height: height, width: width, window: window)
        let scale: Float = 0.8

        // [windows, N, rowWidth], windows row-major per image, positions row-major per window.
        let windowCount = batch * grid.windowRows * grid.windowColumns
        var windowed = [Float]()
        var tokenOf: [Int?] = []  // the token each window position holds, nil for padding
        for b in 0..<batch {
            for wr in 0..<grid.windowRows {
                for wc in 0..<grid.windowColumns {
                    for p in 0..<positions {
                        let row = wr * window + p / window, column = wc * window + p % window
                        let token = row < height && column < width ? (b * height + row) * width + column : nil
                        tokenOf.append(token)
                        windowed += token.map { Array(qkv.data[($0 * rowWidth)..<(($0 + 1) * rowWidth)]) } ?? padding.data
                    }
                }
            }
        }
        func part(_ offset: Int, _ partWidth: Int) -> FloatTensor {
            var data: [Float] = []
            for row in 0..<(windowCount * positions) {
                data += windowed[(row * rowWidth + offset)..<(row * rowWidth + offset + partWidth)]
            }
            return FloatTensor(shape: [windowCount, positions, partWidth], data: data)
        }
        let perWindow = AttentionTests.reference(q: part(0, heads * keyDim), k: part(heads * keyDim, heads * keyDim),
                                                 v: part(2 * heads * keyDim, heads * valueDim), heads: heads, scale: scale,
                                                 bias: bias)
        let valueWidth = heads * valueDim
        var expected = [Expected](repeating: Expected(exact: Double.nan), count: batch * height * width * valueWidth)
        for (row, token) in tokenOf.enumerated() {
            guard let token else { continue }
            for e in 0..<valueWidth { expected[token * valueWidth + e] = perWindow[row * valueWidth + e] }
        }

        let out = Kernels.windowAttention(packedQKV: qkv, grid: grid, paddingQKV: padding, heads: heads, keyDim: keyDim,
                                          valueDim: valueDim, scale: scale, bias: bias)
        expectClose(out, expected, shape: [batch, height * width, valueWidth],
                    "window attention \(height)x\(width), window \(window), bias \(withBias)")
        // TinyViT's own layout, each head's q, k and v side by side: the same numbers, bit for bit.
        let interleaved = PackedAttentionTests.interleavedByHead(qkv, heads: heads, keyDim: keyDim, valueDim: valueDim)
        let paddingInterleaved = PackedAttentionTests.interleavedByHead(padding.reshaped([1, 1, rowWidth]), heads: heads,
                                                                        keyDim: keyDim, valueDim: valueDim)
        let fromInterleaved = Kernels.windowAttention(packedQKV: interleaved, grid: grid,
                                                      paddingQKV: paddingInterleaved.reshaped([rowWidth]), heads: heads,
                                                      keyDim: keyDim, valueDim: valueDim, scale: scale, bias: bias,
                                                      layout: .interleavedByHead)
        #expect(fromInterleaved.data == out.data)
    }
}

@Suite("Attention on keys projected transposed")
struct TransposedKeysTests {
    /// (batch, queries, keys, heads, head dim, value head dim): keys not a multiple of 8, one
    /// query (a single, repeated-row block), and 1024 keys, whose stride is moved off 4 KB.
    static let shapes = [(2, 7, 37, 2, 16, 16), (1, 1, 9, 1, 8, 4), (1, 13, 1_024, 4, 8, 12)]

    @Test("linearTransposed is nn.Linear's output transposed, padding zero", arguments: shapes)
    func projection(_ s: (Int, Int, Int, Int, Int, Int)) {
        let (batch, _, keys, heads, headDim, _) = s
        var rng = SplitMix64(seed: UInt64(keys * 31 + heads))
        let inFeatures = 24, outFeatures = heads * headDim
        let x = randomTensor([batch, keys, inFeatures], using: &rng)
        let weight = randomTensor([outFeatures, inFeatures], using: &rng), bias = randomTensor([outFeatures], using: &rng)
        let projected = Kernels.linearTransposed(x, weight: weight, bias: bias)
        let expected = LinearTests.reference(x, weight, bias)  // [B*Lk, out]
        #expect(projected.length == keys && projected.batch == batch && projected.width == outFeatures)
        #expect(projected.stride >= keys && projected.stride % 8 == 0 && projected.stride % 1024 != 0)
        var actual: [Float] = [], reference: [Expected] = []
        for b in 0..<batch {
            for o in 0..<outFeatures {
                let row = (b * outFeatures + o) * projected.stride
                for j in 0..<keys {
                    actual.append(projected.data.data[row + j])
                    reference.append(expected[(b * keys + j) * outFeatures + o])
                }
                #expect(projected.data.data[(row + keys)..<(row + projected.stride)].allSatisfy { $0 == 0 })
            }
        }
        let check = ToleranceCheck(actual, reference)
        print("[linearTransposed \(s)] \(check)")
        #expect(check.passed, "\(check)")
    }

    @Test("attention on transposed keys equals attention on the projected keys", arguments: shapes)
    func attention(_ s: (Int, Int, Int, Int, Int, Int)) {
        let (batch, queries, keys, heads, headDim, valueHeadDim) = s
        var rng = SplitMix64(seed: UInt64(keys * 17 + queries))
        let inFeatures = 20
        let q = randomTensor([batch, queries, heads * headDim], using: &rng)
        let x = randomTensor([batch, keys, inFeatures], using: &rng)
        let v = randomTensor([batch, keys, heads * valueHeadDim], using: &rng)
        let weight = randomTensor([heads * headDim, inFeatures], using: &rng), bias = randomTensor([heads * headDim], using: &rng)
        let scale: Float = 1.5 / Float(headDim).squareRoot()
        let k = LinearTests.reference(x, weight, bias)
        let expected = AttentionTests.reference(q: q, k: k, keyShape: [batch, keys, heads * headDim], v: v, heads: heads,
                                                scale: scale, bias: nil)
        let out = Kernels.attention(q: q, transposedKeys: Kernels.linearTransposed(x, weight: weight, bias: bias), v: v,
                                    heads: heads, scale: scale)
        expectClose(out, expected, shape: [batch, queries, heads * valueHeadDim], "transposed keys \(s)")
    }
}

@Suite("Attention with decomposed relative positions")
struct RelativePositionAttentionTests {
    /// softmax(scale * q kᵀ + q·Rh[qh][kh] + q·Rw[qw][kw]) v per batch and head, in float64
    /// with the rounding model of `Expected`.
    static func reference(qkv: FloatTensor, heads: Int, scale: Float, heights: FloatTensor, widths: FloatTensor) -> [Expected] {
        let (batch, tokens, width) = (qkv.shape[0], qkv.shape[1], qkv.shape[2] / 3)
        let gridHeight = heights.shape[0], gridWidth = widths.shape[0], d = width / heads
        func value(_ b: Int, _ token: Int, _ part: Int, _ h: Int, _ e: Int) -> Expected {
            Expected(exact: qkv.data[(b * tokens + token) * 3 * width + part * width + h * d + e])
        }
        var out = [Expected](repeating: .zero, count: batch * tokens * width)
        for b in 0..<batch {
            for h in 0..<heads {
                for i in 0..<tokens {
                    let (qh, qw) = (i / gridWidth, i % gridWidth)
                    var relativeHeights = [Expected](repeating: .zero, count: gridHeight)
                    var relativeWidths = [Expected](repeating: .zero, count: gridWidth)
                    for kh in 0..<gridHeight {
                        for e in 0..<d { relativeHeights[kh] += value(b, i, 0, h, e) * Expected(exact: heights.data[(qh * gridHeight + kh) * d + e]) }
                    }
                    for kw in 0..<gridWidth {
                        for e in 0..<d { relativeWidths[kw] += value(b, i, 0, h, e) * Expected(exact: widths.data[(qw * gridWidth + kw) * d + e]) }
                    }
                    var scores = [Expected](repeating: .zero, count: tokens)
                    for j in 0..<tokens {
                        var dot = Expected.zero
                        for e in 0..<d { dot += value(b, i, 0, h, e) * value(b, j, 1, h, e) }
                        scores[j] = dot * Expected(exact: scale) + (relativeHeights[j / gridWidth] + relativeWidths[j % gridWidth])
                    }
                    let maxScore = Expected(exact: scores.map(\.value).max()!)
                    let exps = scores.map { ($0 - maxScore).exp(withinULPs: 2) }
                    let total = exps.reduce(Expected.zero, +)
                    for e in 0..<d {
                        var sum = Expected.zero
                        for j in 0..<tokens { sum += exps[j] / total * value(b, j, 2, h, e) }
                        out[(b * tokens + i) * width + h * d + e] = sum
                    }
                }
            }
        }
        return out
    }

    /// (batch, grid height, grid width, heads, head dim, band score budget): a window batch, a
    /// non-square grid, a 32x32 grid in one band and the same cut into bands of rows (four of
    /// eight, and eleven of three, the last one short), two non-square grids of 117 tokens; on the panel
    /// path, small grids run one task per (window, head), narrower than 16 keys (SAM ViT's 14x14
    /// windows) through the narrow softmax, 17 keys wide (one masked lane per key row) through the other;
    /// 16 heads of 64 put the qkv rows 12 KB apart, so the keys' product copies the queries' rows; a
    /// 128x8 grid is global (1024 tokens) and narrow.
    @Test("matches the float64 definition", arguments: [(3, 3, 3, 2, 8, 1 << 20), (1, 4, 6, 3, 5, 1 << 20),
                                                         (1, 32, 32, 1, 8, 1 << 20), (1, 32, 32, 1, 8, 8 * 32 * 1024),
                                                         (1, 32, 32, 2, 4, 3 * 32 * 1024), (2, 9, 13, 2, 24, 1 << 20),
                                                         (3, 14, 14, 2, 16, 1 << 20), (2, 5, 17, 3, 8, 1 << 20),
                                                         (1, 4, 4, 16, 64, 1 << 20), (1, 128, 8, 1, 4, 1 << 20)])
    func matchesReference(_ c: (Int, Int, Int, Int, Int, Int)) {
        let (batch, gridHeight, gridWidth, heads, headDim, bandScores) = c
        var rng = SplitMix64(seed: UInt64(gridHeight * 100 + gridWidth))
        let qkv = randomTensor([batch, gridHeight * gridWidth, 3 * heads * headDim], using: &rng)
        let heights = randomTensor([gridHeight, gridHeight, headDim], using: &rng)
        let widths = randomTensor([gridWidth, gridWidth, headDim], using: &rng)
        let scale: Float = 1.5 / Float(headDim).squareRoot()
        let expected = Self.reference(qkv: qkv, heads: heads, scale: scale, heights: heights, widths: widths)
        // The bands (BLAS) on every CPU; the panel path where the CPU has AVX-512.
        let kernels: [Kernels.AttentionKernel] = Kernels.panelAttentionAvailable ? [.blas, .panels] : [.blas]
        for kernel in kernels {
            let out = Kernels.relativePositionAttention(packedQKV: qkv, heads: heads, scale: scale,
                                                        positions: .init(heights: heights, widths: widths),
                                                        bandScores: bandScores, kernel: kernel)
            expectClose(out, expected, shape: [batch, gridHeight * gridWidth, heads * headDim],
                        "relative-position attention \(c), \(kernel)")
        }
    }
}
