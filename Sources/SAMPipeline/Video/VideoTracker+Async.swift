import Foundation
import SAMParallel

extension VideoTracker {
    /// The frames of `run(prompts:...)` as they are made, for an app to show one by one. Tracking runs
    /// on a thread of its own; cancelling the consuming task (or dropping the stream) stops it part-way
    /// through a frame (its parallel loops skip what they have not started, `Workers.stoppable`), and
    /// the consumer's next call throws `CancellationError` once the thread has returned. Errors end the sequence with the
    /// `TrackingError`. At most one finished frame waits for the consumer: tracking runs ahead by one
    /// frame, not to the end.
    public func frames(_ prompts: [TrackPrompt], masks: [Int: [UInt8]] = [:], start: Int? = nil, maxFrames: Int? = nil,
                       reverse: Bool = false) -> TrackedFrames {
        let signal = StopSignal(), end = TrackingThreadEnd()
        let tracker = self
        let stream = AsyncThrowingStream(TrackedFrame.self, bufferingPolicy: .bufferingOldest(1)) { continuation in
            // A thread of its own, not a task: tracking is long synchronous work, and waiting for the consumer
            // must not hold one of the few threads Swift's concurrency runs every task on.
            let producer = Thread {
                var running = tracker
                do {
                    try Workers.stoppable(by: signal) { () throws(TrackingError) in
                        try running.run(prompts, masks: masks, start: start, maxFrames: maxFrames, reverse: reverse) { (frame) throws(TrackingError) in
                            // A frame finished after the signal holds unfinished work: never handed out. While the
                            // consumer has not taken the last frame, wait (the buffer holds one).
                            var pending = frame
                            while true {
                                if signal.isRaised { throw .cancelled }
                                switch continuation.yield(pending) {
                                case .enqueued: return
                                case .dropped(let frame):
                                    pending = frame
                                    Thread.sleep(forTimeInterval: 0.002)
                                case .terminated: throw .cancelled
                                @unknown default: throw .cancelled
                                }
                            }
                        }
                    }
                    continuation.finish()
                } catch TrackingError.cancelled {
                    continuation.finish(throwing: CancellationError())
                } catch {
                    continuation.finish(throwing: error)
                }
                end.markEnded()
            }
            producer.start()
            continuation.onTermination = { _ in signal.raise() }
        }
        return TrackedFrames(stream: stream, stop: signal, end: end)
    }
}
