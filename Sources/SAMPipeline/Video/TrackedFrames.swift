import SAMParallel

/// The frames `VideoTracker.frames` yields, as they are made. A consumer whose task is cancelled
/// takes no further frame, not even one already made: the stream underneath buffers the frame
/// tracked ahead and would otherwise hand it out after the cancellation. When the iteration ends
/// (the last frame, cancellation or an error), tracking has stopped: nothing of it runs on. Leaving
/// the loop early (`break`) stops tracking without waiting for it; cancel the task to wait.
public struct TrackedFrames: AsyncSequence, Sendable {
    /// Each element is one tracked frame, in processing order.
    public typealias Element = TrackedFrame

    let stream: AsyncThrowingStream<TrackedFrame, any Error>
    /// Raised to stop the tracking thread; its end, awaited before the iteration ends.
    let stop: StopSignal
    let end: TrackingThreadEnd

    /// Hands out the frames one by one, checking for cancellation before each.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<TrackedFrame, any Error>.AsyncIterator
        let stop: StopSignal
        let end: TrackingThreadEnd

        /// The next frame; nil after the last; `CancellationError` once the consuming task is
        /// cancelled. Before it returns nil or throws, the tracking thread has returned.
        public mutating func next() async throws -> TrackedFrame? {
            do {
                try Task.checkCancellation()
                if let frame = try await base.next() { return frame }
            } catch {
                await trackingStopped()
                throw error
            }
            // The stream ended: the thread finished it, or the consuming task was cancelled while waiting.
            await trackingStopped()
            try Task.checkCancellation()
            return nil
        }

        /// Stops the tracking thread, if it still runs, and waits for it to return.
        private func trackingStopped() async {
            stop.raise()
            await end.ended()
        }
    }

    /// An iterator over the frames still to come.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator(), stop: stop, end: end) }
}
