import Dispatch
import SAMTensor
import Synchronization
import Testing
@testable import SAMModel

@Suite("Derived tensors")
struct DerivedTensorTests {
    @Test("computed once, on first use, even when many threads ask at once")
    func computedOnce() {
        let calls = Atomic<Int>(0)
        let derived = DerivedTensor {
            calls.add(1, ordering: .relaxed)
            return FloatTensor(shape: [2], data: [1, 2])
        }
        #expect(calls.load(ordering: .relaxed) == 0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            #expect(derived.value == FloatTensor(shape: [2], data: [1, 2]))
        }
        #expect(calls.load(ordering: .relaxed) == 1)
    }

    @Test("a supplied value is returned as it is")
    func supplied() {
        let value = FloatTensor(shape: [1, 3], data: [4, 5, 6])
        #expect(DerivedTensor(value: value).value == value)
    }

}
