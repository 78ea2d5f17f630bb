extension VideoTracker {
    /// Runs a prompts file as a user of SAM2VideoPredictor would: for each round in order, its
    /// prompts are added in file order, then the objects are propagated (`start`, `maxFrames`,
    /// `reverse` for every round). `each` sees the frames of the last round's propagation; a round
    /// before the last stops once it has tracked every frame a later round corrects, which gives the
    /// same results as running it to the end (later passes recompute every frame they reach).
    /// `masks[entry]` is the binary mask of an entry that has one.
    public mutating func run(_ prompts: [TrackPrompt], masks: [Int: [UInt8]] = [:], start: Int? = nil, maxFrames: Int? = nil,
                             reverse: Bool = false, each: (TrackedFrame) throws(TrackingError) -> Void) throws(TrackingError) {
        let rounds = Set(prompts.map(\.round)).sorted()
        guard !rounds.isEmpty else { throw .invalidRequest("the prompts file has no prompts") }
        for (position, round) in rounds.enumerated() {
            let later = prompts.filter { $0.round > round }.map(\.frame)
            retainedFrames = Set(later)
            for (entry, prompt) in prompts.enumerated() where prompt.round == round {
                if let mask = masks[entry] {
                    try addMask(frame: prompt.frame, object: prompt.object, mask: mask)
                } else if prompt.maskFile != nil {
                    throw .invalidPrompt(frame: prompt.frame, object: prompt.object, "entry \(entry): its mask was not loaded")
                } else {
                    try addPoints(frame: prompt.frame, object: prompt.object, points: prompt.points, box: prompt.box)
                }
            }
            let last = position == rounds.count - 1
            let through = last ? nil : (reverse ? later.min() : later.max())
            try propagate(start: start, maxFrames: maxFrames, reverse: reverse, through: through) { (frame) throws(TrackingError) in
                if last { try each(frame) }
            }
        }
        retainedFrames = []
    }
}
