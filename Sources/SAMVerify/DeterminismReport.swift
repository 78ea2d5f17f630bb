/// What `--determinism` found: the same cases run in separate processes with 1, 2 and all worker
/// threads (SAM_NUM_THREADS) and on each BLAS kernel path (OPENBLAS_CORETYPE), every native output
/// compared bit for bit with the first run's.
///
/// The thread count must not change a single bit. A kernel path may: OpenBLAS's kernels for another
/// CPU generation sum each product in another order (other register blocking, FMA or not), so their
/// float32 results differ in the last bits. That difference is bounded: each path's run must pass
/// the set itself, and each output differ from the baseline's by no more than its atol.
///
/// One exception is known and bounded the same way: the kernels cut large products and attention into
/// one block per worker (`Kernels.gemm`, the attention kernels' query-row blocks), and OpenBLAS's sgemm
/// rounds a product differently by its shape, so another thread count can move outputs in the last bits.
/// It is told apart from a race by running the most threads twice: work cut by the thread count gives
/// the same bits every time, a race does not.
public struct DeterminismReport: Codable, Sendable, Equatable {
    /// One process.
    public struct Configuration: Codable, Sendable, Equatable {
        /// "1 thread", "2 threads", "4 threads, Haswell kernels".
        public var label: String
        /// SAM_NUM_THREADS as set, and the worker count the process reported.
        public var threads: Int
        public var workers: Int?
        /// OPENBLAS_CORETYPE as set (nil: OpenBLAS's own choice for this CPU).
        public var kernelPath: String?
        /// The BLAS as the process described it (library, kernels in use).
        public var blas: String?
        /// The process's own verification status (0 every check passed).
        public var exitCode: Int32
        public var seconds: Double
    }

    /// One configuration against the baseline.
    public struct Difference: Codable, Sendable, Equatable {
        public var configuration: String
        /// The configuration it is compared with (the baseline, or the first run of a repeated one).
        public var against: String
        /// OpenBLAS's kernels in the compared run ("Cooperlake", "Haswell").
        public var core: String?
        /// "threads": must be bit-identical (or the bounded exception); "kernel path": bounded; "repeat": the
        /// most threads run twice, which must be bit-identical (else a race).
        public var kind: String
        public var outputsCompared: Int
        public var outputsDiffering: Int
        public var elementsCompared: Int
        public var elementsDiffering: Int
        public var maxAbs: Double
        /// "case/output" of the largest difference, and that output's name.
        public var worst: String?
        public var worstOutput: String?
        /// The largest difference in each output, over every case.
        public var outputMaxAbs: [String: Double] = [:]
        /// Outputs whose largest difference is over their bound.
        public var exceeding: [String] = []
        /// Cases whose full-size thresholded masks differ (by digest).
        public var maskCasesDiffering: Int
        /// The bound of the worst output (its atol; 0 for thread counts).
        public var bound: Double
        public var status: CheckStatus
        public var note: String
        /// Why a thread-count difference is allowed (within `bound`): which kernel, and why it cannot be bit-identical.
        public var exception: String?
    }

    public var baseline: String
    public var configurations: [Configuration]
    public var differences: [Difference]
    /// pass when every thread count is bit-identical and every kernel path within its bound; fail
    /// otherwise; bad_input when a run could not be made at all.
    public var status: CheckStatus
    public var rule: String

    static let rule = "outputs must be bit-identical across worker thread counts; another BLAS kernel path may differ "
        + "(another summation order inside the products) by at most each output's atol, and its own run must pass the set; "
        + "a thread-count difference that repeats exactly run after run is work cut by the worker count (bounded the same way)"

    /// Thread-count differences, all zero when the runtime is deterministic.
    public var threadDifferences: [Difference] { differences.filter { $0.kind == "threads" } }
}
