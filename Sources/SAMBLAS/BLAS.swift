// The one place that chooses the BLAS: Accelerate on Apple platforms, OpenBLAS elsewhere.
#if canImport(Accelerate)
import Accelerate
#else
import COpenBLAS
#if canImport(Glibc)
import Glibc
#endif
#endif

public enum BLAS {
    /// Row-major C[m,n] = alpha * op(A) * op(B) + beta * C, op = transpose when the flag is set.
    ///
    /// `lda`, `ldb`, `ldc` are row strides of the matrices as stored (so `lda >= k` for an
    /// untransposed A, `lda >= m` for a transposed one). When `beta == 0`, C is not read.
    public static func sgemm(transA: Bool, transB: Bool, m: Int, n: Int, k: Int, alpha: Float,
                             a: UnsafePointer<Float>, lda: Int, b: UnsafePointer<Float>, ldb: Int,
                             beta: Float, c: UnsafeMutablePointer<Float>, ldc: Int) {
        precondition(m >= 0 && n >= 0 && k >= 0, "sgemm: negative size m=\(m) n=\(n) k=\(k)")
        precondition(lda >= max(1, transA ? m : k), "sgemm: lda \(lda) too small")
        precondition(ldb >= max(1, transB ? k : n), "sgemm: ldb \(ldb) too small")
        precondition(ldc >= max(1, n), "sgemm: ldc \(ldc) too small")
        precondition(max(m, n, k, lda, ldb, ldc) <= Int(Int32.max), "sgemm: size exceeds 32-bit BLAS")
        if m == 0 || n == 0 { return }
        cblas_sgemm(CblasRowMajor,
                    transA ? CblasTrans : CblasNoTrans,
                    transB ? CblasTrans : CblasNoTrans,
                    Int32(m), Int32(n), Int32(k), alpha,
                    a, Int32(lda), b, Int32(ldb),
                    beta, c, Int32(ldc))
    }

    /// A one-line description of the backend, for logs and benchmarks, e.g.
    /// "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64, core: SkylakeX, threads: 2".
    public static var backendDescription: String {
        #if canImport(Accelerate)
        return "Accelerate"
        #else
        let config = openblas_get_config().map { String(cString: $0) } ?? "OpenBLAS (unknown config)"
        let core = openblas_get_corename().map { String(cString: $0) } ?? "unknown"
        let threads = openblas_get_num_threads()
        return "\(config.trimmingSpaces), core: \(core), threads: \(threads)"
        #endif
    }

    /// The number of threads the BLAS may use for one large call (1 on Accelerate, which is
    /// called as if single-threaded and manages its own threads).
    public static var threadCount: Int {
        #if canImport(Accelerate)
        return 1
        #else
        return Int(openblas_get_num_threads())
        #endif
    }

    /// Sets the number of threads the BLAS may use for one large call, for the whole process.
    /// No-op on Accelerate, which manages its own threads.
    public static func setThreadCount(_ count: Int) {
        precondition(count >= 1, "thread count must be at least 1")
        #if !canImport(Accelerate)
        openblas_set_num_threads(Int32(clamping: count))
        #endif
    }
}

extension BLAS {
    /// Ends the BLAS's own worker threads, for a process that runs it on one thread (the caller
    /// does its threading). OpenBLAS starts one worker per extra core when the library loads,
    /// and idle workers spin in sched_yield for a while before they sleep: on 2 cores that
    /// took a core from the parallel model load (first load ~60 ms, ~45 ms without them).
    /// OpenBLAS restarts them by itself if a later call runs multi-threaded. Uses OpenBLAS's
    /// `blas_thread_shutdown_` (what its fork handler calls) when the library exports it;
    /// otherwise, and on Accelerate, does nothing.
    public static func stopIdleThreads() {
        #if !canImport(Accelerate) && canImport(Glibc)
        typealias Shutdown = @convention(c) () -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "blas_thread_shutdown_") else { return }
        _ = unsafeBitCast(symbol, to: Shutdown.self)()
        #endif
    }
}

extension String {
    /// OpenBLAS pads its config string with spaces.
    fileprivate var trimmingSpaces: String {
        var scalars = Substring(self)
        while scalars.first == " " { scalars.removeFirst() }
        while scalars.last == " " { scalars.removeLast() }
        return String(scalars)
    }
}
