import SAMParallel

// The kernels' parallel loops run on the package's one pool of workers (SAMParallel).
extension Kernels {
    /// Worker threads the kernels cut their work for (`gemm`'s blocks, tiles, bands): the pool's
    /// size, inside `Workers.serially` too, where the same pieces then run inline. OpenBLAS's
    /// sgemm rounds a product by its shape (its Haswell kernels give other bits for almost any
    /// split of the columns), so cutting by the threads a loop may use would give a batch item run
    /// serially other bits than the same item run alone.
    public static var workerCount: Int { Workers.count }

    /// Runs `body(i)` for every `i` in `0..<count` on the workers; see `Workers.forEach`.
    package static func parallelFor(_ count: Int, _ body: (Int) -> Void) {
        Workers.forEach(count, body)
    }

    /// Runs `body(i)` for every `i` in `0..<count`, one index per worker at a time with that index's
    /// own loops run inline (`Workers.serially`): for independent items each worth a whole core (a
    /// batch of prompts), where one item at a time split over the workers spends more on hand-offs
    /// between small products. The caller's kernel choices (`withLinearPrecision`,
    /// `withFloat32LinearKernel`) hold on the workers too, which task-local values alone would not.
    package static func parallelForSerialItems(_ count: Int, _ body: (Int) -> Void) {
        let precision = scopedLinearPrecision, kernel = scopedFloat32LinearKernel
        Workers.forEach(count) { index in
            $scopedLinearPrecision.withValue(precision) {
                $scopedFloat32LinearKernel.withValue(kernel) {
                    Workers.serially { body(index) }
                }
            }
        }
    }

    /// Hands each task a contiguous range of indices; see `Workers.forEachChunk`.
    package static func parallelForChunks(_ count: Int, _ body: (Range<Int>) -> Void) {
        Workers.forEachChunk(count, body)
    }

    /// Cheap elementwise work in ranges of at least `minimumChunk`; see `Workers.forEachRange`.
    static func parallelRanges(_ count: Int, minimumChunk: Int = 32_768, _ body: (Range<Int>) -> Void) {
        Workers.forEachRange(count, minimumChunk: minimumChunk, body)
    }
}
