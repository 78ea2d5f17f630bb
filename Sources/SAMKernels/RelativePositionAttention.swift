import SAMBLAS
import SAMTensor

extension Kernels {
    /// Tables of SAM ViT's decomposed relative positions for one grid of queries and keys (a
    /// window, or the whole image for a global block): `heights[qRow][kRow]` and
    /// `widths[qCol][kCol]`, each a head-dim vector, laid out [q, k, headDim].
    package struct RelativePositionTables: Sendable {
        package let gridHeight: Int, gridWidth: Int, headDim: Int
        package let heights: FloatTensor
        package let widths: FloatTensor

        package init(heights: FloatTensor, widths: FloatTensor) {
            precondition(heights.shape.count == 3 && widths.shape.count == 3 && heights.shape[0] == heights.shape[1]
                         && widths.shape[0] == widths.shape[1] && heights.shape[2] == widths.shape[2],
                         "relative position tables \(heights.shape), \(widths.shape) are not [h, h, d] and [w, w, d]")
            self.heights = heights
            self.widths = widths
            gridHeight = heights.shape[0]
            gridWidth = widths.shape[0]
            headDim = heights.shape[2]
        }
    }

    /// SAM ViT's attention on a grid of tokens with decomposed relative positions:
    /// for every batch (window) and head, softmax(scale * q kᵀ + rel_h + rel_w) v, where for query
    /// (qh, qw) and key (kh, kw), rel_h = q · heights[qh][kh] and rel_w = q · widths[qw][kw]
    /// (the unscaled q, as upstream adds them).
    ///
    /// qkv [B, N, 3*H*D] is the qkv projection's output as upstream lays it (all heads' q, then
    /// k, then v), N = gridHeight * gridWidth tokens in row-major order. Returns [B, N, H*D], heads
    /// merged. Tasks are (batch, head, a band of grid rows): a band's scores [rows, N] are the only
    /// buffer, so a 64x64 global grid never holds a 4096x4096 matrix per head.
    /// ref: segment_anything/modeling/image_encoder.py Attention.forward, add_decomposed_rel_pos
    /// `bandScores` bounds a band's score buffer (floats); tests lower it to cut small grids into bands.
    /// `kernel`: `.panels` runs `relativePositionAttentionPanels` (CPUs with AVX-512), `.blas` the
    /// bands below; `.automatic` takes the panels where linear layers do (`relativePositionPanelsPay`);
    /// `.smallHeads` is not a kernel of this function and runs the bands.
    package static func relativePositionAttention(packedQKV qkv: FloatTensor, heads: Int, scale: Float,
                                                 positions: RelativePositionTables, bandScores: Int = 1_048_576,
                                                 kernel: AttentionKernel = .automatic) -> FloatTensor {
        let (gridHeight, gridWidth, headDim) = (positions.gridHeight, positions.gridWidth, positions.headDim)
        let tokens = gridHeight * gridWidth, width = heads * headDim
        precondition(qkv.shape.count == 3 && qkv.shape[1] == tokens && qkv.shape[2] == 3 * width,
                     "relative-position attention: qkv \(qkv.shape) is not [B, \(tokens), 3*\(heads)*\(headDim)]")
        let batch = qkv.shape[0]
        guard batch * tokens > 0 else { return FloatTensor(zeros: [batch, tokens, width]) }
        let usePanels = panelAttentionAvailable
            && (kernel == .panels || (kernel == .automatic && relativePositionPanelsPay))
        if usePanels {
            let data = [Float](unsafeUninitializedCapacity: batch * tokens * width) { outBuffer, initialized in
                qkv.data.withUnsafeBufferPointer { qkvBuffer in
                    if tokens >= relativePositionPanelsGlobalTokens {
                        relativePositionAttentionPanels(qkv: qkvBuffer.baseAddress!, batch: batch, heads: heads, scale: scale,
                                                        positions: positions, into: outBuffer.baseAddress!)
                    } else {
                        relativePositionAttentionPanelsInWindows(qkv: qkvBuffer.baseAddress!, batch: batch, heads: heads,
                                                                 scale: scale, positions: positions, into: outBuffer.baseAddress!)
                    }
                }
                initialized = batch * tokens * width
            }
            return FloatTensor(shape: [batch, tokens, width], data: data)
        }
        // Bands of grid rows whose scores stay within ~4 MB: each band's two sgemms pack that head's
        // keys and values again, so a global block's 64x64 grid runs 4 grid rows (256 queries) per
        // band, not 1 (4% less encoder CPU time on ViT-B than 1 MB bands).
        let bandRows = max(1, min(gridHeight, bandScores / (gridWidth * tokens)))
        let bandsPerHead = (gridHeight + bandRows - 1) / bandRows
        let rowStride = 3 * width
        let data = [Float](unsafeUninitializedCapacity: batch * tokens * width) { outBuffer, initialized in
            qkv.data.withUnsafeBufferPointer { qkvBuffer in
            positions.heights.data.withUnsafeBufferPointer { heightBuffer in
            positions.widths.data.withUnsafeBufferPointer { widthBuffer in
                let base = qkvBuffer.baseAddress!, out = outBuffer.baseAddress!
                parallelForChunks(batch * heads * bandsPerHead) { tasks in
                    let scores = UnsafeMutablePointer<Float>.allocate(capacity: bandRows * gridWidth * tokens)
                    let relative = UnsafeMutablePointer<Float>.allocate(capacity: gridWidth * (gridHeight + gridWidth))
                    defer { scores.deallocate(); relative.deallocate() }
                    for task in tasks {
                        let band = task % bandsPerHead, h = (task / bandsPerHead) % heads, b = task / (bandsPerHead * heads)
                        let firstGridRow = band * bandRows, gridRows = min(bandRows, gridHeight - firstGridRow)
                        let rows = gridRows * gridWidth, firstRow = firstGridRow * gridWidth
                        let q = base + (b * tokens + firstRow) * rowStride + h * headDim
                        let k = base + b * tokens * rowStride + width + h * headDim
                        let v = base + b * tokens * rowStride + 2 * width + h * headDim
                        BLAS.sgemm(transA: false, transB: true, m: rows, n: tokens, k: headDim, alpha: scale,
                                   a: q, lda: rowStride, b: k, ldb: rowStride, beta: 0, c: scores, ldc: tokens)
                        for gridRow in 0..<gridRows {
                            relativePositions(q: q + gridRow * gridWidth * rowStride, qStride: rowStride,
                                              queryRow: firstGridRow + gridRow, tables: positions,
                                              heightTable: heightBuffer.baseAddress!, widthTable: widthBuffer.baseAddress!,
                                              heights: relative, widths: relative + gridWidth * gridHeight)
                            for column in 0..<gridWidth {
                                addRelativePositions(heights: relative + column * gridHeight,
                                                     widths: relative + gridWidth * gridHeight + column * gridWidth,
                                                     gridHeight: gridHeight, gridWidth: gridWidth,
                                                     into: scores + (gridRow * gridWidth + column) * tokens)
                            }
                        }
                        for r in 0..<rows { softmaxRow(scores + r * tokens, count: tokens) }
                        BLAS.sgemm(transA: false, transB: false, m: rows, n: headDim, k: tokens, alpha: 1,
                                   a: scores, lda: tokens, b: v, ldb: rowStride, beta: 0,
                                   c: out + (b * tokens + firstRow) * width + h * headDim, ldc: width)
                    }
                }
            }
            }
            }
            initialized = batch * tokens * width
        }
        return FloatTensor(shape: [batch, tokens, width], data: data)
    }

    /// rel_h and rel_w of the `gridWidth` queries of grid row `queryRow`: heights [gridWidth queries,
    /// gridHeight key rows] and widths [gridWidth queries, gridWidth key columns].
    /// ref: image_encoder.py add_decomposed_rel_pos (the two einsums)
    static func relativePositions(q: UnsafePointer<Float>, qStride: Int, queryRow: Int, tables: RelativePositionTables,
                                  heightTable: UnsafePointer<Float>, widthTable: UnsafePointer<Float>,
                                  heights: UnsafeMutablePointer<Float>, widths: UnsafeMutablePointer<Float>) {
        let (gridHeight, gridWidth, headDim) = (tables.gridHeight, tables.gridWidth, tables.headDim)
        // rel_h for the whole grid row at once.
        BLAS.sgemm(transA: false, transB: true, m: gridWidth, n: gridHeight, k: headDim, alpha: 1,
                   a: q, lda: qStride, b: heightTable + queryRow * gridHeight * headDim, ldb: headDim,
                   beta: 0, c: heights, ldc: gridHeight)
        // rel_w: each query column has its own table row.
        for column in 0..<gridWidth {
            let query = q + column * qStride, table = widthTable + column * gridWidth * headDim
            for keyColumn in 0..<gridWidth {
                widths[column * gridWidth + keyColumn] = dot(query, table + keyColumn * headDim, count: headDim)
            }
        }
    }

    /// One query's scores over the grid's keys += rel_h[key row] + rel_w[key column].
    /// ref: image_encoder.py add_decomposed_rel_pos (the broadcast add)
    @inline(__always)
    static func addRelativePositions(heights: UnsafePointer<Float>, widths: UnsafePointer<Float>,
                                     gridHeight: Int, gridWidth: Int, into row: UnsafeMutablePointer<Float>) {
        for keyRow in 0..<gridHeight {
            let segment = row + keyRow * gridWidth, height = heights[keyRow]
            for keyColumn in 0..<gridWidth { segment[keyColumn] += height + widths[keyColumn] }
        }
    }

    /// Σ a[i] * b[i] over `count` floats, eight lanes at a time.
    @inline(__always)
    static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int) -> Float {
        var sums = SIMD8<Float>(repeating: 0)
        var i = 0
        while i + 8 <= count {
            sums += UnsafeRawPointer(a + i).loadUnaligned(as: SIMD8<Float>.self) * UnsafeRawPointer(b + i).loadUnaligned(as: SIMD8<Float>.self)
            i += 8
        }
        var total = sums.sum()
        while i < count {
            total += a[i] * b[i]
            i += 1
        }
        return total
    }
}
