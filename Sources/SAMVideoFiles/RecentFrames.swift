import SAMImage

/// The last frames decoded, within a byte budget: the tracker reads a frame again for its outputs,
/// and walks backwards in reverse, where each seek decodes a run of frames ending at the one asked.
struct RecentFrames {
    /// Frames kept, at least 1.
    let capacity: Int
    private var frames: [(position: Int, image: RGBImage)] = []

    init(byteBudget: Int, frameBytes: Int) {
        capacity = max(1, min(64, byteBudget / max(frameBytes, 1)))
    }

    func image(at position: Int) -> RGBImage? { frames.first { $0.position == position }?.image }

    /// Keeps `image`, dropping the frame kept longest when full.
    mutating func insert(_ image: RGBImage, at position: Int) {
        frames.removeAll { $0.position == position }
        if frames.count == capacity { frames.removeFirst() }
        frames.append((position, image))
    }
}
