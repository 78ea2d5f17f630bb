@testable import SAMKernels
import Testing

@Suite("Heap growth limit between units of work")
struct HeapGrowthLimitTests {
    /// A resident-set reader that plays back `values`, one per call.
    /// (Its returns are counted, not made: trimming the test runner's heap would reach every test running beside.)
    final class Playback: @unchecked Sendable {
        var values: [Int?]
        var returns = 0
        init(_ values: [Int?]) { self.values = values }
        func next() -> Int? { values.removeFirst() }
    }

    @Test("returns freed memory only once the resident set outgrows the first unit's by the allowance")
    func returnsOnGrowth() {
        // Unit 1 sets the reference (100); 105 and 110 are within 10%; 111 is over: return, and the
        // next unit (90) is the new reference, which 98 stays within and 100 exceeds.
        let playback = Playback([100, 105, 110, 111, 90, 98, 100])
        var limit = Kernels.HeapGrowthLimit(allowedGrowth: 0.1, residentBytes: { playback.next() },
                                            returnFreedMemory: { playback.returns += 1 })
        let returned = (0..<7).map { _ in limit.unitFinished() }
        #expect(returned == [false, false, false, true, false, false, true])
        #expect(playback.returns == 2)
    }

    @Test("never returns where the resident set cannot be read")
    func unreadable() {
        let playback = Playback([nil, nil, nil])
        var limit = Kernels.HeapGrowthLimit(allowedGrowth: 0, residentBytes: { playback.next() },
                                            returnFreedMemory: { playback.returns += 1 })
        #expect((0..<3).map { _ in limit.unitFinished() } == [false, false, false])
        #expect(playback.returns == 0)
    }

    #if os(Linux)
    @Test("reads this process's resident set from /proc/self/statm")
    func readsResidentSet() throws {
        let resident = try #require(Kernels.residentBytes())
        // A test process holds at least its own code and a few pages of heap, and less than the machine.
        #expect(resident > 1 << 20 && resident < 1 << 40)
    }
    #endif
}
