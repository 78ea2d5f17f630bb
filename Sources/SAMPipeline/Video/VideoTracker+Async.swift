import SAMParallel

extension VideoTracker {
    /// The frames of `run(prompts:...)` as they are made, for an app to show one by one. Tracking runs
    /// on a task of its own; cancelling the consuming task (or dropping the stream) stops it part-way
    /// through a frame (its parallel loops skip what they have not started, `Workers.stoppable`), and
    /// the stream ends with `CancellationError`. Errors end the stream with the `TrackingError`.
    public func frames(_ prompts: [TrackPrompt], masks: [Int: [UInt8]] = [:], start: Int? = nil, maxFrames: Int? = nil,
                       reverse: Bool = false) -> AsyncThrowingStream<TrackedFrame, any Error> {
        let signal = StopSignal()
        let tracker = self
        return AsyncThrowingStream(TrackedFrame.self) { continuation in
            let task = Task.detached {
                var running = tracker
                do {
                    try Workers.stoppable(by: signal) { () throws(TrackingError) in
                        try running.run(prompts, masks: masks, start: start, maxFrames: maxFrames, reverse: reverse) { (frame) throws(TrackingError) in
                            // A frame finished after the signal holds unfinished work: never handed out.
                            if signal.isRaised || Task.isCancelled { throw .cancelled }
                            continuation.yield(frame)
                        }
                    }
                    continuation.finish()
                } catch TrackingError.cancelled {
                    continuation.finish(throwing: CancellationError())
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in
                signal.raise()
                task.cancel()
            }
        }
    }
}
