import Foundation
@testable import SAMParallel
import Synchronization
import Testing

/// `Workers`' loops on `HelperThreads`: every index once, whether the helpers are spinning (loops
/// back to back) or asleep (a pause longer than their spin first), inside another loop, and from
/// several threads at once.
@Suite("Helper threads")
struct HelperThreadsTests {
    /// Counts visits of `count` indices by `forEachChunk`, then checks each was visited once.
    static func visitsOnce(_ count: Int) -> Bool {
        let visits = Mutex([Int](repeating: 0, count: count))
        Workers.forEachChunk(count) { range in
            visits.withLock { for i in range { $0[i] += 1 } }
        }
        return visits.withLock { $0.allSatisfy { $0 == 1 } }
    }

    @Test("loops back to back and after the helpers fell asleep run every index once")
    func everyIndexOnce() {
        var failures = 0
        for loop in 0..<3_000 where !Self.visitsOnce(1 + loop % 67) { failures += 1 }
        for _ in 0..<5 {
            usleep(UInt32(3 * HelperThreads.spinNanoseconds / 1_000))  // the helpers sleep by now
            if !Self.visitsOnce(40) { failures += 1 }
        }
        #expect(failures == 0)
    }

    @Test("a loop inside a loop's body runs on its caller and completes")
    func nestedLoops() {
        let total = Atomic<Int>(0)
        Workers.forEach(16) { _ in
            Workers.forEach(10) { _ in total.add(1, ordering: .relaxed) }
        }
        #expect(total.load(ordering: .relaxed) == 160)
    }

    @Test("loops started from several threads at once each run every index once")
    func concurrentCallers() async {
        let results = await withTaskGroup(of: Bool.self) { group in
            for caller in 0..<6 {
                group.addTask { (0..<200).allSatisfy { Self.visitsOnce(5 + ($0 + caller) % 50) } }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 6))
    }

    /// Other suites' loops run at the same time and may own the helpers for long stretches, so this
    /// asks for them directly until it gets them (`run` is false while another loop owns them).
    @Test("the helpers take part: a loop of slow indices runs on every worker", .enabled(if: Workers.count > 1))
    func helpersTakePart() {
        let threads = Mutex<Set<String>>([]), next = Atomic<Int>(0)
        var owned = false
        for _ in 0..<20_000 where !owned {
            owned = HelperThreads.shared.run {
                while next.add(1, ordering: .relaxed).newValue <= 8 {
                    threads.withLock { _ = $0.insert("\(pthread_self())") }
                    usleep(3_000)
                }
            }
            if !owned { usleep(1_000) }
        }
        #expect(owned, "the helpers stayed owned by other loops")
        #expect(threads.withLock { $0.count } == Workers.count)
    }
}
