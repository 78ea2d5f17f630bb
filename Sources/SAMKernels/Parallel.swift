import SAMParallel

// The kernels' parallel loops run on the package's one pool of workers (SAMParallel).
extension Kernels {
    /// Worker threads the parallel loops (and `gemm`) split across; see `Workers.count`.
    public static var workerCount: Int { Workers.count }

    /// Runs `body(i)` for every `i` in `0..<count` on the workers; see `Workers.forEach`.
    public static func parallelFor(_ count: Int, _ body: (Int) -> Void) {
        Workers.forEach(count, body)
    }

    /// Hands each task a contiguous range of indices; see `Workers.forEachChunk`.
    public static func parallelForChunks(_ count: Int, _ body: (Range<Int>) -> Void) {
        Workers.forEachChunk(count, body)
    }

    /// Cheap elementwise work in ranges of at least `minimumChunk`; see `Workers.forEachRange`.
    static func parallelRanges(_ count: Int, minimumChunk: Int = 32_768, _ body: (Range<Int>) -> Void) {
        Workers.forEachRange(count, minimumChunk: minimumChunk, body)
    }
}
