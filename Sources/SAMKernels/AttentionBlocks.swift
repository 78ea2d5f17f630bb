extension Kernels {
    /// Runs `body(scores, b, h, firstRow, rows)` for every attention task — a (batch, head, block
    /// of `rows` query rows from `firstRow`) — in parallel. `preferredRows` is the block size a
    /// kernel wants; blocks are split further when there are too few (batch, head) pairs to give
    /// every core a few tasks. Each range of tasks gets its own `scores` buffer of
    /// blockRows * scratchPerRow floats, reused for every task in it.
    static func forEachAttentionBlock(batch: Int, heads: Int, queryLength: Int, scratchPerRow: Int, preferredRows: Int,
                                      _ body: (_ scores: UnsafeMutablePointer<Float>, _ b: Int, _ h: Int,
                                               _ firstRow: Int, _ rows: Int) -> Void) {
        let wantedBlocksPerHead = (2 * workerCount + batch * heads - 1) / (batch * heads)
        let blockRows = max(1, min(preferredRows, queryLength, (queryLength + wantedBlocksPerHead - 1) / wantedBlocksPerHead))
        let blocksPerHead = (queryLength + blockRows - 1) / blockRows
        parallelForChunks(batch * heads * blocksPerHead) { tasks in
            let scores = UnsafeMutablePointer<Float>.allocate(capacity: blockRows * scratchPerRow)
            defer { scores.deallocate() }
            for task in tasks {
                let firstRow = (task % blocksPerHead) * blockRows
                body(scores, task / (heads * blocksPerHead), (task / blocksPerHead) % heads,
                     firstRow, min(blockRows, queryLength - firstRow))
            }
        }
    }
}
