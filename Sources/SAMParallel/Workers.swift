import Synchronization
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// The package's one pool of worker threads: every parallel loop (kernels, image resizing, model
/// load) runs on at most `Workers.count` threads at once, its caller and `HelperThreads`.
public enum Workers {
    /// How many threads the parallel loops use: the CPUs this process may run on (its affinity mask,
    /// which `taskset`, cgroup cpusets and container runtimes narrow; the online count where the mask
    /// cannot be read), or fewer when the environment variable SAM_NUM_THREADS says so (read once, at
    /// first use; values outside 1...CPUs are ignored or clamped). Never more workers than cores the
    /// process has: a worker without a core of its own stalls every loop it shares.
    public static let count: Int = {
        let usable = usableCPUs
        guard let text = getenv("SAM_NUM_THREADS").map({ String(cString: $0) }), let limit = Int(text), limit >= 1 else {
            return usable
        }
        return min(limit, usable)
    }()

    /// The CPUs this process may run on.
    static var usableCPUs: Int {
        let online = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #if os(Linux)
        // sched_getaffinity is declared only under _GNU_SOURCE, which the Glibc module does not set:
        // looked up instead (glibc's ABI: pid, mask size in bytes, mask).
        typealias GetAffinity = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sched_getaffinity") else { return online }
        var mask = [UInt64](repeating: 0, count: 16)  // 1024 CPUs, glibc's cpu_set_t
        let status = mask.withUnsafeMutableBytes { unsafeBitCast(symbol, to: GetAffinity.self)(0, $0.count, $0.baseAddress!) }
        guard status == 0 else { return online }
        let allowed = mask.reduce(0) { $0 + $1.nonzeroBitCount }
        return max(1, min(allowed, online))
        #else
        return online
        #endif
    }

    /// Threads a loop started on this thread may use: `count`, or 1 inside `serially`.
    public static var available: Int { runsSerially ? 1 : count }

    /// Set inside `serially`: this thread's loops run on it alone.
    @TaskLocal private static var runsSerially = false

    /// Runs `body` with every parallel loop it starts on this thread run inline, on this thread
    /// alone: for a caller that already keeps every worker busy with independent items (a batch of
    /// prompts, one per worker), where splitting each item's small products again only adds
    /// hand-offs.
    public static func serially<R>(_ body: () throws -> R) rethrows -> R {
        try $runsSerially.withValue(true) { try body() }
    }

    /// Set inside `stoppable`: the signal that, once raised, makes this thread's loops skip the work
    /// they have not started.
    @TaskLocal private static var stopSignal: StopSignal?

    /// Runs `body` so that raising `signal` (from any thread) stops it soon: every parallel loop it
    /// starts on this thread then skips the ranges no worker has taken yet, and a loop started after
    /// that does nothing. What `body` computes after the signal is garbage: the caller checks
    /// `signal.isRaised` when `body` returns and discards the result (an encoder cancelled part-way).
    public static func stoppable<R, E: Error>(by signal: StopSignal, _ body: () throws(E) -> R) throws(E) -> R {
        let result = $stopSignal.withValue(signal) { Result { () throws(E) -> R in try body() } }
        return try result.get()
    }

    /// Runs `body(i)` for every `i` in `0..<count`, spread across the workers.
    ///
    /// Indices are grouped into contiguous chunks so per-index overhead stays small; each index
    /// should still be a meaningful unit of work (a row block, a channel plane). `body` runs
    /// concurrently with itself, so it may only write disjoint memory.
    public static func forEach(_ count: Int, _ body: (Int) -> Void) {
        forEachChunk(count) { range in
            for i in range { body(i) }
        }
    }

    /// Like `forEach`, but hands each task a contiguous range of indices, so a task can set up
    /// scratch memory once and reuse it for every index in its range.
    public static func forEachChunk(_ count: Int, _ body: (Range<Int>) -> Void) {
        let signal = stopSignal
        guard count > 0, signal?.isRaised != true else { return }
        if count == 1 || available == 1 {
            body(0..<count)
            return
        }
        // Ranges shrink as the loop runs (`GuidedRanges`): a core that a neighbour on a shared
        // machine slows, or a worker that wakes late, no longer leaves the other waiting for a
        // whole fixed chunk (SAM 2.1 tiny: 2 threads 1.87 -> 1.93 CPUs busy).
        // A stoppable loop hands out ranges a quarter the size, so the work left running when the
        // signal is raised is a sixteenth of the loop at most instead of a quarter.
        let ranges = GuidedRanges(count: count, workers: Self.count, finer: signal != nil)
        // The caller and the helper threads take ranges until none are left; while another loop
        // owns the helpers (a loop inside a loop's body), the caller takes them all. `body` only
        // runs until `run` returns, and the contract above (disjoint writes) makes sharing it safe.
        func loop() { while signal?.isRaised != true, let range = ranges.take() { body(range) } }
        if !HelperThreads.shared.run(loop) { loop() }
    }

    /// Runs `body` over `0..<count` split into contiguous ranges across the workers, for cheap
    /// elementwise work: ranges have at least `minimumChunk` elements so threading pays off, and
    /// small counts run serially.
    public static func forEachRange(_ count: Int, minimumChunk: Int = 32_768, _ body: (Range<Int>) -> Void) {
        let chunks = max(1, min(available * 4, count / max(1, minimumChunk)))
        if chunks == 1 {
            body(0..<count)
            return
        }
        forEach(chunks) { chunk in
            body((chunk * count / chunks)..<((chunk + 1) * count / chunks))
        }
    }
}

/// A flag one thread raises and others poll: asks the loops run inside `Workers.stoppable` to stop.
public final class StopSignal: Sendable {
    private let raised = Atomic<Bool>(false)

    public init() {}

    public var isRaised: Bool { raised.load(ordering: .relaxed) }
    public func raise() { raised.store(true, ordering: .relaxed) }
}

/// The ranges of one loop, handed out in turn: each a 1/(2 x workers) share (1/(8 x workers) when
/// `finer`) of the indices not yet taken, so the first are large (few hand-outs) and the last
/// single indices (a worker that is behind, or started late, leaves the other at most one index to
/// wait for).
final class GuidedRanges: Sendable {
    private let next = Atomic<Int>(0)
    private let count: Int, divisor: Int

    init(count: Int, workers: Int, finer: Bool = false) {
        self.count = count
        divisor = (finer ? 8 : 2) * workers
    }

    func take() -> Range<Int>? {
        var start = next.load(ordering: .relaxed)
        while start < count {
            let end = start + max(1, (count - start) / divisor)
            let (taken, current) = next.compareExchange(expected: start, desired: end, ordering: .relaxed)
            if taken { return start..<end }
            start = current
        }
        return nil
    }
}
