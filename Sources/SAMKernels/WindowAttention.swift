import SAMTensor

extension Kernels {
    /// An H x W token grid cut into `window` x `window` squares from the top-left; the last row
    /// and column of windows overhang the bottom and right edges when the window does not divide
    /// the grid (where TinyViT pads with zeros before its attention).
    public struct WindowGrid: Sendable, Equatable {
        public let height: Int, width: Int, window: Int

        public init(height: Int, width: Int, window: Int) {
            precondition(height >= 1 && width >= 1 && window >= 1, "window grid: bad sizes \(height)x\(width), window \(window)")
            self.height = height
            self.width = width
            self.window = window
        }

        public var windowRows: Int { (height + window - 1) / window }
        public var windowColumns: Int { (width + window - 1) / window }
        /// Positions per window, padding included.
        public var positions: Int { window * window }
    }

    /// TinyViT's windowed attention, computed on the token grid without building padded windows.
    ///
    /// qkv [B, H*W, heads*(2*keyDim + valueDim)] holds every token's packed projection (all
    /// heads' q, then k, then v), in token order. For every window of `grid` and every head:
    /// softmax(q kᵀ * scale + bias) v over the window's window² positions, `bias` [heads, N, N]
    /// indexed by position inside the window. Positions outside the grid (upstream's zero
    /// padding) are keys and values with `paddingQKV` [heads*(2*keyDim + valueDim)], the
    /// projection of a padded position; their queries are skipped, as upstream crops them away.
    /// Returns [B, H*W, heads*valueDim] in token order: what upstream's pad → partition →
    /// attention → reverse → crop gives, without the padded copies and the padded rows' work.
    ///
    /// Tasks are (window, head) pairs, in parallel; each gathers its head's queries, keys and
    /// values into contiguous scratch (one small copy, in cache), does two single-threaded sgemms
    /// around the softmax and scatters its output rows back to the tokens.
    public static func windowAttention(packedQKV qkv: FloatTensor, grid: WindowGrid, paddingQKV: FloatTensor,
                                       heads: Int, keyDim: Int, valueDim: Int, scale: Float,
                                       bias: FloatTensor) -> FloatTensor {
        let rowWidth = heads * (2 * keyDim + valueDim), tokens = grid.height * grid.width
        precondition(qkv.shape.count == 3 && qkv.shape[1] == tokens && qkv.shape[2] == rowWidth,
                     "window attention: packed qkv \(qkv.shape) is not [B, \(grid.height)*\(grid.width), \(rowWidth)]")
        precondition(paddingQKV.count == rowWidth, "window attention: padding row \(paddingQKV.shape) is not [\(rowWidth)]")
        let positions = grid.positions
        precondition(bias.count == heads * positions * positions,
                     "window attention: bias \(bias.shape) is not [\(heads), \(positions), \(positions)]")
        let batch = qkv.shape[0], valueWidth = heads * valueDim
        guard batch > 0 else { return FloatTensor(zeros: [0, tokens, valueWidth]) }
        configureBLAS
        let windowsPerImage = grid.windowRows * grid.windowColumns
        // Every token is a query of exactly one window, and each task writes its head's columns
        // of its window's tokens, so the output is written in full.
        let data = [Float](unsafeUninitializedCapacity: batch * tokens * valueWidth) { outBuffer, initializedCount in
            qkv.data.withUnsafeBufferPointer { qkvBuffer in
            paddingQKV.data.withUnsafeBufferPointer { paddingBuffer in
            bias.data.withUnsafeBufferPointer { biasBuffer in
                let source = qkvBuffer.baseAddress!, padding = paddingBuffer.baseAddress!
                let out = outBuffer.baseAddress!
                parallelForChunks(batch * windowsPerImage * heads) { tasks in
                    let scratch = WindowScratch(positions: positions, keyDim: keyDim, valueDim: valueDim)
                    defer { scratch.deallocate() }
                    for task in tasks {
                        let windowIndex = task / heads, head = task % heads
                        let image = windowIndex / windowsPerImage, inImage = windowIndex % windowsPerImage
                        let firstRow = (inImage / grid.windowColumns) * grid.window
                        let firstColumn = (inImage % grid.windowColumns) * grid.window
                        let window = WindowOnGrid(grid: grid, firstToken: image * tokens + firstRow * grid.width + firstColumn,
                                                  rows: min(grid.window, grid.height - firstRow),
                                                  columns: min(grid.window, grid.width - firstColumn))
                        attendWindow(window, head: head, heads: heads, keyDim: keyDim, valueDim: valueDim, scale: scale,
                                     qkv: source, padding: padding, bias: biasBuffer.baseAddress!, scratch: scratch,
                                     into: out)
                    }
                }
            }
            }
            }
            initializedCount = outBuffer.count
        }
        return FloatTensor(shape: [batch, tokens, valueWidth], data: data)
    }

    /// One window's place on the token grid: its top-left token and the part of it inside the grid.
    private struct WindowOnGrid {
        let grid: WindowGrid
        /// Index over [B * H * W] of the window's top-left token.
        let firstToken: Int
        /// The rows and columns of the window that lie inside the grid.
        let rows: Int, columns: Int

        var queries: Int { rows * columns }

        /// The token at row i, column j of the window (inside the grid).
        @inline(__always) func token(_ i: Int, _ j: Int) -> Int { firstToken + i * grid.width + j }

        /// Window position (row-major inside the window, padding included) of the r-th query,
        /// queries being the inside tokens in row-major order.
        @inline(__always) func position(ofQuery r: Int) -> Int { (r / columns) * grid.window + r % columns }
    }

    /// Per-task buffers: one head's queries, keys and values of a window, its scores and output.
    private struct WindowScratch {
        let q, k, v, scores, out: UnsafeMutablePointer<Float>

        init(positions: Int, keyDim: Int, valueDim: Int) {
            let sizes = [positions * keyDim, positions * keyDim, positions * valueDim, positions * positions,
                         positions * valueDim]
            let base = UnsafeMutablePointer<Float>.allocate(capacity: sizes.reduce(0, +))
            q = base
            k = q + sizes[0]
            v = k + sizes[1]
            scores = v + sizes[2]
            out = scores + sizes[3]
        }

        func deallocate() { q.deallocate() }
    }

    /// softmax(q kᵀ * scale + bias) v for one head of one window, written to the output rows of
    /// the window's tokens (columns head*valueDim ..< +valueDim).
    private static func attendWindow(_ w: WindowOnGrid, head: Int, heads: Int, keyDim: Int, valueDim: Int, scale: Float,
                                     qkv: UnsafePointer<Float>, padding: UnsafePointer<Float>, bias: UnsafePointer<Float>,
                                     scratch s: WindowScratch, into out: UnsafeMutablePointer<Float>) {
        let rowWidth = heads * (2 * keyDim + valueDim), valueWidth = heads * valueDim
        let positions = w.grid.positions, side = w.grid.window
        let qOffset = head * keyDim, kOffset = heads * keyDim + head * keyDim, vOffset = 2 * heads * keyDim + head * valueDim
        // Keys and values of every position, the padded ones from the padding row.
        for p in 0..<positions {
            let i = p / side, j = p % side
            let row = i < w.rows && j < w.columns ? qkv + w.token(i, j) * rowWidth : padding
            (s.k + p * keyDim).update(from: row + kOffset, count: keyDim)
            (s.v + p * valueDim).update(from: row + vOffset, count: valueDim)
        }
        // Queries of the inside tokens only.
        let queries = w.queries
        for r in 0..<queries {
            (s.q + r * keyDim).update(from: qkv + w.token(r / w.columns, r % w.columns) * rowWidth + qOffset, count: keyDim)
        }
        let headBias = bias + head * positions * positions
        attendRows(queries, q: s.q, qStride: keyDim, keys: positions, k: s.k, kStride: keyDim, headDim: keyDim,
                   v: s.v, vStride: valueDim, valueDim: valueDim, scale: scale,
                   biasRow: { r in headBias + w.position(ofQuery: r) * positions }, scores: s.scores,
                   into: s.out, outStride: valueDim)
        for r in 0..<queries {
            (out + w.token(r / w.columns, r % w.columns) * valueWidth + head * valueDim)
                .initialize(from: s.out + r * valueDim, count: valueDim)
        }
    }
}
