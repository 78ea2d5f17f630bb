import SAMBLAS

extension Kernels {
    /// Row-major C[m,n] = alpha * op(A) * op(B) + beta * C (the `BLAS.sgemm` contract), spread
    /// over the package's worker threads.
    ///
    /// With the BLAS on one thread (`tuneProcessForInference`), a large product is cut here into
    /// one block of C per worker, along whichever of m or n is larger, and each block is one
    /// single-threaded sgemm: OpenBLAS's own worker threads spin (sched_yield) between calls and,
    /// on a 2-core machine, steal the cores the other parallel loops need. When the BLAS has its
    /// own threads, the product is one call it threads itself. Small products run as one call on
    /// the calling thread, which is also what code already inside a parallel loop wants.
    package static func gemm(transA: Bool, transB: Bool, m: Int, n: Int, k: Int, alpha: Float,
                            a: UnsafePointer<Float>, lda: Int, b: UnsafePointer<Float>, ldb: Int,
                            beta: Float, c: UnsafeMutablePointer<Float>, ldc: Int) {
        let workers = workerCount
        guard workers > 1, m * n * k >= parallelGEMMWorkThreshold, BLAS.threadCount == 1 else {
            BLAS.sgemm(transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, a: a, lda: lda,
                       b: b, ldb: ldb, beta: beta, c: c, ldc: ldc)
            return
        }
        // Blocks are multiples of 16 rows/columns so every block keeps whole register tiles.
        if m >= n {
            let blocks = min(workers, (m + 15) / 16)
            let rowsPerBlock = ((m + blocks - 1) / blocks + 15) / 16 * 16
            parallelFor(blocks) { block in
                let first = block * rowsPerBlock, rows = min(rowsPerBlock, m - first)
                guard rows > 0 else { return }
                // Row `first` of op(A): row `first` of A, or column `first` of a transposed A.
                let aBlock = transA ? a + first : a + first * lda
                BLAS.sgemm(transA: transA, transB: transB, m: rows, n: n, k: k, alpha: alpha, a: aBlock, lda: lda,
                           b: b, ldb: ldb, beta: beta, c: c + first * ldc, ldc: ldc)
            }
        } else {
            let blocks = min(workers, (n + 15) / 16)
            let columnsPerBlock = ((n + blocks - 1) / blocks + 15) / 16 * 16
            parallelFor(blocks) { block in
                let first = block * columnsPerBlock, columns = min(columnsPerBlock, n - first)
                guard columns > 0 else { return }
                // Column `first` of op(B): column `first` of B, or row `first` of a transposed B.
                let bBlock = transB ? b + first * ldb : b + first
                BLAS.sgemm(transA: transA, transB: transB, m: m, n: columns, k: k, alpha: alpha, a: a, lda: lda,
                           b: bBlock, ldb: ldb, beta: beta, c: c + first, ldc: ldc)
            }
        }
    }

    /// Below this many multiply-adds one thread is faster than waking another (~0.1 ms of work).
    static let parallelGEMMWorkThreshold = 1 << 20
}
