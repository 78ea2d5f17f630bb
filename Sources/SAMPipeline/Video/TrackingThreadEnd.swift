import Synchronization

/// Whether `VideoTracker.frames`' tracking thread has returned, for a consumer to wait on: a loop over
/// `TrackedFrames` that ends by cancellation or an error leaves no tracking running behind it, so an app
/// that exits right after does not tear libraries down under a product in flight (OpenBLAS clears its
/// kernel table as the process exits, and a call still running then crashes).
final class TrackingThreadEnd: Sendable {
    private let state = Mutex<(ended: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// Whether the thread has returned.
    var hasEnded: Bool { state.withLock { $0.ended } }

    /// Called by the tracking thread as its last step.
    func markEnded() {
        let waiting = state.withLock { state in
            state.ended = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns once `markEnded` has been called.
    func ended() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let endedAlready = state.withLock { state in
                if state.ended { return true }
                state.waiting.append(continuation)
                return false
            }
            if endedAlready { continuation.resume() }
        }
    }
}
