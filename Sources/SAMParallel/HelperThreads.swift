import Synchronization
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// The threads that run `Workers`' loops beside the caller: `Workers.count - 1` of them, started at
/// the first loop and kept for the life of the process. Between loops each spins for a while
/// (`spinNanoseconds`) before it sleeps, so the next loop of a burst (a decoder call runs about a
/// hundred, many of them tens of microseconds long) starts on both cores at once instead of
/// waiting for a sleeping thread to wake, which on a 2-core VM took about as long as the loop.
///
/// One loop at a time owns the threads; a loop started while another runs (inside a loop's body,
/// or from another thread of the app) runs on its caller alone. A helper joins a loop only while
/// it is open: the caller closes it when it finds no work left and waits only for the helpers
/// that joined, never for one still asleep.
final class HelperThreads: @unchecked Sendable {
    static let shared = HelperThreads(count: Workers.count - 1)

    /// How long a helper looks for the next loop before it sleeps.
    static let spinNanoseconds: UInt64 = 200_000

    private let count: Int
    /// Bumped for every loop; helpers watch it.
    private let generation = Atomic<Int>(0)
    /// The current loop's helpers that joined it, and `closed` once the caller has closed it.
    private let joined = Atomic<Int>(HelperThreads.closed)
    private static let closed = 1 << 40
    /// Whether a loop owns the threads.
    private let owned = Atomic<Bool>(false)
    /// The current loop's work; written only while no helper is joined and the loop is closed.
    private nonisolated(unsafe) var work: (() -> Void)?
    /// Where sleeping helpers wait for the next generation.
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    private let wakeUp: UnsafeMutablePointer<pthread_cond_t>
    private nonisolated(unsafe) var sleepers = 0
    private let started = Atomic<Bool>(false)

    private init(count: Int) {
        self.count = max(0, count)
        lock = .allocate(capacity: 1)
        wakeUp = .allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        pthread_cond_init(wakeUp, nil)
    }

    /// Runs `work` on the caller and every helper at once and returns when all have finished it;
    /// false (nothing run) when another loop owns the threads or there are none.
    func run(_ work: () -> Void) -> Bool {
        guard count > 0, owned.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            return false
        }
        startIfNeeded()
        withoutActuallyEscaping(work) { work in
            self.work = work
            // Open the loop (publishing `work`), then announce it.
            joined.store(0, ordering: .releasing)
            generation.add(1, ordering: .releasing)
            pthread_mutex_lock(lock)
            if sleepers > 0 { pthread_cond_broadcast(wakeUp) }
            pthread_mutex_unlock(lock)
            work()
            // Close it: no helper joins from now on; wait for those that did.
            var stillWorking = joined.add(Self.closed, ordering: .acquiringAndReleasing).newValue - Self.closed
            while stillWorking > 0 {
                stillWorking = joined.load(ordering: .acquiring) - Self.closed
            }
            self.work = nil
        }
        owned.store(false, ordering: .releasing)
        return true
    }

    private func startIfNeeded() {
        guard started.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        for _ in 0..<count {
            #if canImport(Darwin)
            var thread: pthread_t?
            let start: @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? = { context in
                Unmanaged<HelperThreads>.fromOpaque(context).takeUnretainedValue().helperLoop()
            }
            #else
            var thread = pthread_t()
            let start: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { context in
                Unmanaged<HelperThreads>.fromOpaque(context!).takeUnretainedValue().helperLoop()
            }
            #endif
            // A helper that cannot start leaves its share to the others: loops never wait for a
            // helper that has not joined.
            guard pthread_create(&thread, nil, start, Unmanaged.passUnretained(self).toOpaque()) == 0 else { continue }
            #if canImport(Darwin)
            if let thread { pthread_detach(thread) }
            #else
            pthread_detach(thread)
            #endif
        }
    }

    private func helperLoop() -> Never {
        var seen = 0
        while true {
            seen = waitForNextLoop(after: seen)
            // Join the loop unless it has been closed; run its work; leave.
            var current = joined.load(ordering: .relaxed)
            while current < Self.closed {
                let (exchanged, original) = joined.compareExchange(expected: current, desired: current + 1,
                                                                   ordering: .acquiring)
                if exchanged {
                    work?()
                    joined.subtract(1, ordering: .releasing)
                    break
                }
                current = original
            }
        }
    }

    /// The generation after `seen`, spinning for `spinNanoseconds` and then sleeping.
    private func waitForNextLoop(after seen: Int) -> Int {
        let start = Self.now()
        var spins = 0
        while true {
            let current = generation.load(ordering: .acquiring)
            if current != seen { return current }
            spins += 1
            if spins % 256 == 0 && Self.now() - start > Self.spinNanoseconds { break }
        }
        pthread_mutex_lock(lock)
        sleepers += 1
        var current = generation.load(ordering: .acquiring)
        while current == seen {
            pthread_cond_wait(wakeUp, lock)
            current = generation.load(ordering: .acquiring)
        }
        sleepers -= 1
        pthread_mutex_unlock(lock)
        return current
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
