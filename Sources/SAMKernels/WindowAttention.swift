import SAMTensor

extension Kernels {
    /// An H x W token grid cut into `window` x `window` squares from the top-left; the last row
    /// and column of windows overhang the bottom and right edges when the window does not divide
    /// the grid (where TinyViT and Hiera pad with zeros before their attention).
    package struct WindowGrid: Sendable, Equatable {
        package let height: Int, width: Int, window: Int

        package init(height: Int, width: Int, window: Int) {
            precondition(height >= 1 && width >= 1 && window >= 1, "window grid: bad sizes \(height)x\(width), window \(window)")
            self.height = height
            self.width = width
            self.window = window
        }

        package var windowRows: Int { (height + window - 1) / window }
        package var windowColumns: Int { (width + window - 1) / window }
        /// Positions per window, padding included.
        package var positions: Int { window * window }
    }

    /// TinyViT's and Hiera's windowed attention, computed on the token grid without building padded windows.
    ///
    /// qkv [B, H*W, heads*(2*keyDim + valueDim)] holds every token's packed projection, its heads
    /// laid out as `layout` says, in token order. For every window of `grid` and every head:
    /// softmax(q kᵀ * scale + bias) v over the window's window² positions, `bias` [heads, N, N]
    /// indexed by position inside the window (nil: none, as in Hiera). Positions outside the grid (upstream's zero
    /// padding) are keys and values with `paddingQKV` [heads*(2*keyDim + valueDim)], the
    /// projection of a padded position; their queries are skipped, as upstream crops them away.
    /// Returns [B, H*W, heads*valueDim] in token order: what upstream's pad → partition →
    /// attention → reverse → crop gives, without the padded copies and the padded rows' work.
    ///
    /// Tasks are windows, in parallel; each copies its window's packed rows into scratch (one
    /// copy per window row, padded positions from the padding row), then for every head does two
    /// single-threaded sgemms around the softmax, reading q, k and v in place in those rows, and
    /// copies its output back one window row at a time. (Per-head gathers of 32-float rows were
    /// ~2% of the encoder's time in memmove calls.)
    package static func windowAttention(packedQKV qkv: FloatTensor, grid: WindowGrid, paddingQKV: FloatTensor,
                                       heads: Int, keyDim: Int, valueDim: Int, scale: Float,
                                       bias: FloatTensor?, layout: PackedQKVLayout = .groupedByPart) -> FloatTensor {
        let rowWidth = heads * (2 * keyDim + valueDim), tokens = grid.height * grid.width
        precondition(qkv.shape.count == 3 && qkv.shape[1] == tokens && qkv.shape[2] == rowWidth,
                     "window attention: packed qkv \(qkv.shape) is not [B, \(grid.height)*\(grid.width), \(rowWidth)]")
        precondition(paddingQKV.count == rowWidth, "window attention: padding row \(paddingQKV.shape) is not [\(rowWidth)]")
        let positions = grid.positions
        if let bias {
            precondition(bias.count == heads * positions * positions,
                         "window attention: bias \(bias.shape) is not [\(heads), \(positions), \(positions)]")
        }
        let batch = qkv.shape[0], valueWidth = heads * valueDim
        guard batch > 0 else { return FloatTensor(zeros: [0, tokens, valueWidth]) }
        let windowsPerImage = grid.windowRows * grid.windowColumns
        let columns = layout.columns(heads: heads, keyDim: keyDim, valueDim: valueDim)
        // Every token is a query of exactly one window, and each task writes its head's columns
        // of its window's tokens, so the output is written in full.
        let data = [Float](unsafeUninitializedCapacity: batch * tokens * valueWidth) { outBuffer, initializedCount in
            qkv.data.withUnsafeBufferPointer { qkvBuffer in
            paddingQKV.data.withUnsafeBufferPointer { paddingBuffer in
            (bias?.data ?? []).withUnsafeBufferPointer { biasBuffer in
                let source = qkvBuffer.baseAddress!, padding = paddingBuffer.baseAddress!
                let out = outBuffer.baseAddress!
                parallelForChunks(batch * windowsPerImage) { tasks in
                    let scratch = WindowScratch(positions: positions, rowWidth: rowWidth, keyDim: keyDim, valueWidth: valueWidth)
                    defer { scratch.deallocate() }
                    for windowIndex in tasks {
                        let image = windowIndex / windowsPerImage, inImage = windowIndex % windowsPerImage
                        let firstRow = (inImage / grid.windowColumns) * grid.window
                        let firstColumn = (inImage % grid.windowColumns) * grid.window
                        let window = WindowOnGrid(grid: grid, firstToken: image * tokens + firstRow * grid.width + firstColumn,
                                                  rows: min(grid.window, grid.height - firstRow),
                                                  columns: min(grid.window, grid.width - firstColumn))
                        attendWindow(window, heads: heads, keyDim: keyDim, valueDim: valueDim, columns: columns, scale: scale,
                                     qkv: source, padding: padding, bias: bias == nil ? nil : biasBuffer.baseAddress, scratch: scratch,
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

        /// The first token of the window's row i (inside the grid); the row's tokens follow it.
        @inline(__always) func firstToken(ofRow i: Int) -> Int { firstToken + i * grid.width }

        /// Window position (row-major inside the window, padding included) of the r-th query,
        /// queries being the inside tokens in row-major order.
        @inline(__always) func position(ofQuery r: Int) -> Int { (r / columns) * grid.window + r % columns }
    }

    /// Per-task buffers: a window's packed rows (every position, padding included), one head's
    /// queries of a cropped window, one head's scores, and the window's output rows.
    private struct WindowScratch {
        let rows, q, scores, out: UnsafeMutablePointer<Float>

        init(positions: Int, rowWidth: Int, keyDim: Int, valueWidth: Int) {
            let sizes = [positions * rowWidth, positions * keyDim, positions * positions, positions * valueWidth]
            let base = UnsafeMutablePointer<Float>.allocate(capacity: sizes.reduce(0, +))
            rows = base
            q = rows + sizes[0]
            scores = q + sizes[1]
            out = scores + sizes[2]
        }

        func deallocate() { rows.deallocate() }
    }

    /// softmax(q kᵀ * scale + bias) v for every head of one window, written to the output rows of
    /// the window's tokens.
    private static func attendWindow(_ w: WindowOnGrid, heads: Int, keyDim: Int, valueDim: Int,
                                     columns: (q: HeadColumns, k: HeadColumns, v: HeadColumns), scale: Float,
                                     qkv: UnsafePointer<Float>, padding: UnsafePointer<Float>, bias: UnsafePointer<Float>?,
                                     scratch s: WindowScratch, into out: UnsafeMutablePointer<Float>) {
        let rowWidth = heads * (2 * keyDim + valueDim), valueWidth = heads * valueDim
        let positions = w.grid.positions, side = w.grid.window
        // The packed rows of every position in window order; the window's tokens in a grid row are
        // consecutive tokens, so each window row inside the grid is one copy.
        for i in 0..<side {
            let destination = s.rows + i * side * rowWidth
            let inside = i < w.rows ? w.columns : 0
            if inside > 0 { destination.update(from: qkv + w.firstToken(ofRow: i) * rowWidth, count: inside * rowWidth) }
            for j in inside..<side { (destination + j * rowWidth).update(from: padding, count: rowWidth) }
        }
        let queries = w.queries, isWhole = queries == positions
        for head in 0..<heads {
            let qOffset = columns.q.of(head: head), kOffset = columns.k.of(head: head), vOffset = columns.v.of(head: head)
            // Queries of the inside tokens only: in place for a whole window, gathered for a cropped one.
            if !isWhole {
                for r in 0..<queries {
                    (s.q + r * keyDim).update(from: s.rows + w.position(ofQuery: r) * rowWidth + qOffset, count: keyDim)
                }
            }
            let headBias = bias.map { $0 + head * positions * positions }
            attendRows(queries, q: isWhole ? s.rows + qOffset : s.q, qStride: isWhole ? rowWidth : keyDim,
                       keys: positions, k: s.rows + kOffset, kStride: rowWidth, headDim: keyDim,
                       v: s.rows + vOffset, vStride: rowWidth, valueDim: valueDim, scale: scale,
                       biasRow: { r in headBias.map { $0 + w.position(ofQuery: r) * positions } }, scores: s.scores,
                       into: s.out + head * valueDim, outStride: valueWidth)
        }
        // Output rows are in query order: window row i's tokens are queries i*columns ..< (i+1)*columns.
        for i in 0..<w.rows {
            (out + w.firstToken(ofRow: i) * valueWidth).initialize(from: s.out + i * w.columns * valueWidth,
                                                          count: w.columns * valueWidth)
        }
    }
}
