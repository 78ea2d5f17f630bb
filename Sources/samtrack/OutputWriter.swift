import Dispatch
import Synchronization

/// Writes each tracked frame's outputs on a thread of its own, in frame order, while the tracker
/// works on the next frame. Writing a frame (its mask PNGs, the overlay, the logits) is serial work
/// of a few dozen milliseconds that left one of the cores idle between two frames' products. One
/// frame is written while the next is tracked; the tracker waits before handing over another, so
/// at most one frame's outputs are held.
final class OutputWriter: Sendable {
    private let queue = DispatchQueue(label: "samtrack.outputs")
    private let free = DispatchSemaphore(value: 1)
    private let failure = Mutex<(any Error)?>(nil)

    /// Queues `work` once the frame before it is written. Throws the error an earlier frame's work
    /// threw, and queues nothing after it: tracking stops there.
    func submit(_ work: @escaping @Sendable () throws -> Void) throws {
        free.wait()
        if let error = failure.withLock({ $0 }) {
            free.signal()
            throw error
        }
        queue.async { [self] in
            defer { free.signal() }
            do { try work() } catch { failure.withLock { $0 = error } }
        }
    }

    /// Waits until every queued frame is written (before the outputs are published, and before a
    /// failed run removes them); throws the error a frame's work threw.
    func finish() throws {
        queue.sync {}
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
