import Dispatch
import Synchronization
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// The package's one pool of worker threads: every parallel loop (kernels, image resizing, model
/// load) runs on at most `Workers.count` threads at once.
public enum Workers {
    /// How many threads the parallel loops use: the online CPU count, or fewer when the environment
    /// variable SAM_NUM_THREADS says so (read once, at first use; values outside 1...CPUs are ignored
    /// or clamped).
    public static let count: Int = {
        let online = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        guard let text = getenv("SAM_NUM_THREADS").map({ String(cString: $0) }), let limit = Int(text), limit >= 1 else {
            return online
        }
        return min(limit, online)
    }()

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
        guard count > 0 else { return }
        // A few chunks per worker balance uneven work without much scheduling overhead.
        let chunks = min(count, Self.count * 4)
        if chunks == 1 || Self.count == 1 {
            body(0..<count)
            return
        }
        // `count` threads at most take chunks in turn until none is left: a busy core slows only
        // the chunks it holds. Chunk sizes differ by at most one.
        let next = ChunkCounter()
        // concurrentPerform wants a @Sendable closure, but `body` is an ordinary closure that
        // writes through captured pointers. It only runs until concurrentPerform returns, and the
        // contract above (disjoint writes) is what makes sharing it safe.
        withoutActuallyEscaping(body) { body in
            let shared = UncheckedSendable(body)
            DispatchQueue.concurrentPerform(iterations: min(Self.count, chunks)) { _ in
                while true {
                    let chunk = next.take()
                    guard chunk < chunks else { return }
                    shared.value((chunk * count / chunks)..<((chunk + 1) * count / chunks))
                }
            }
        }
    }

    /// Runs `body` over `0..<count` split into contiguous ranges across the workers, for cheap
    /// elementwise work: ranges have at least `minimumChunk` elements so threading pays off, and
    /// small counts run serially.
    public static func forEachRange(_ count: Int, minimumChunk: Int = 32_768, _ body: (Range<Int>) -> Void) {
        let chunks = max(1, min(Self.count * 4, count / max(1, minimumChunk)))
        if chunks == 1 {
            body(0..<count)
            return
        }
        forEach(chunks) { chunk in
            body((chunk * count / chunks)..<((chunk + 1) * count / chunks))
        }
    }
}

/// The next chunk to take, shared by the threads of one loop.
private final class ChunkCounter: Sendable {
    private let next = Atomic<Int>(0)
    func take() -> Int { next.wrappingAdd(1, ordering: .relaxed).oldValue }
}

/// Lets a value cross into a @Sendable closure; used only where the concurrent accesses are
/// known to be disjoint.
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
