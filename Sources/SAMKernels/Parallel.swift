import Dispatch
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

extension Kernels {
    /// Worker threads the parallel loops (and `gemm`) split across: the online CPU count, or
    /// fewer when the environment variable SAM_NUM_THREADS says so (read once, at first use).
    public static let workerCount: Int = {
        let online = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        guard let text = getenv("SAM_NUM_THREADS").map({ String(cString: $0) }), let limit = Int(text), limit >= 1 else {
            return online
        }
        return min(limit, online)
    }()

    /// Run `body(i)` for every `i` in `0..<count`, spread across cores.
    ///
    /// Indices are grouped into contiguous chunks so per-index overhead stays small; each index
    /// should still be a meaningful unit of work (a row block, a channel plane). Runs serially
    /// on one core or when there is a single index. `body` runs concurrently with itself, so it
    /// may only write disjoint memory.
    public static func parallelFor(_ count: Int, _ body: (Int) -> Void) {
        parallelForChunks(count) { range in
            for i in range { body(i) }
        }
    }

    /// Like `parallelFor`, but hands each task a contiguous range of indices, so a task can set
    /// up scratch memory once and reuse it for every index in its range.
    public static func parallelForChunks(_ count: Int, _ body: (Range<Int>) -> Void) {
        guard count > 0 else { return }
        if count == 1 || workerCount == 1 {
            body(0..<count)
            return
        }
        // A few chunks per worker balance uneven work without much scheduling overhead.
        let chunks = min(count, workerCount * 4)
        // concurrentPerform wants a @Sendable closure, but `body` is an ordinary closure that
        // writes through captured pointers. It only runs until concurrentPerform returns, and
        // the contract above (disjoint writes) is what makes sharing it safe.
        withoutActuallyEscaping(body) { body in
            let shared = UncheckedSendable(body)
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                // Spread the remainder over the chunks so sizes differ by at most one.
                let start = chunk * count / chunks
                let end = (chunk + 1) * count / chunks
                shared.value(start..<end)
            }
        }
    }

    /// Run `body` over `0..<count` split into contiguous ranges across cores, for cheap
    /// elementwise work: ranges have at least `minimumChunk` elements so threading pays off,
    /// and small counts run serially.
    static func parallelRanges(_ count: Int, minimumChunk: Int = 32_768, _ body: (Range<Int>) -> Void) {
        let chunks = max(1, min(workerCount * 4, count / minimumChunk))
        if chunks == 1 {
            body(0..<count)
            return
        }
        parallelFor(chunks) { chunk in
            body((chunk * count / chunks)..<((chunk + 1) * count / chunks))
        }
    }
}

/// Lets a value cross into a @Sendable closure; used only where the concurrent accesses are
/// known to be disjoint.
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
