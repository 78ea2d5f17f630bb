/// The frames `VideoTracker.frames` yields, as they are made. A consumer whose task is cancelled
/// takes no further frame, not even one already made: the stream underneath buffers the frame
/// tracked ahead and would otherwise hand it out after the cancellation.
public struct TrackedFrames: AsyncSequence, Sendable {
    /// Each element is one tracked frame, in processing order.
    public typealias Element = TrackedFrame

    let stream: AsyncThrowingStream<TrackedFrame, any Error>

    /// Hands out the frames one by one, checking for cancellation before each.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<TrackedFrame, any Error>.AsyncIterator

        /// The next frame; `CancellationError` once the consuming task is cancelled.
        public mutating func next() async throws -> TrackedFrame? {
            try Task.checkCancellation()
            return try await base.next()
        }
    }

    /// An iterator over the frames still to come.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
}
