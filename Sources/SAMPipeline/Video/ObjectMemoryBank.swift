/// One object's outputs that later frames may attend to (upstream's `output_dict_per_obj[obj]`):
/// conditioning frames (prompted) in the order they became such, and tracked frames.
package struct ObjectMemoryBank: Sendable {
    package private(set) var conditioningFrames: [Int] = []
    package private(set) var conditioning: [Int: ObjectFrameOutput] = [:]
    package internal(set) var nonConditioning: [Int: ObjectFrameOutput] = [:]

    mutating func setConditioning(_ frame: Int, _ output: ObjectFrameOutput) {
        if conditioning[frame] == nil { conditioningFrames.append(frame) }
        conditioning[frame] = output
    }

    /// The conditioning frames attended to from `frame` (all, or the closest `limit`), then the rest.
    /// Choosing fewer than 2 fails, as upstream's assert does (a limit of 1 works while an object has
    /// one conditioning frame).
    /// ref: sam2/modeling/sam2_utils.py select_closest_cond_frames
    func selectConditioning(near frame: Int, limit: Int) throws(TrackingError) -> (selected: [Int], unselected: [Int]) {
        guard limit != -1, conditioningFrames.count > limit else { return (conditioningFrames, []) }
        guard limit >= 2 else {
            throw .invalidRequest("frame \(frame): max_cond_frames_in_attn \(limit) would choose among \(conditioningFrames.count) "
                                  + "conditioning frames of an object; upstream asserts it is at least 2 when it has to choose")
        }
        var selected: [Int] = []
        if let before = conditioningFrames.filter({ $0 < frame }).max() { selected.append(before) }
        if let after = conditioningFrames.filter({ $0 >= frame }).min() { selected.append(after) }
        let remaining = conditioningFrames.filter { !selected.contains($0) }
            .enumerated().sorted { (abs($0.element - frame), $0.offset) < (abs($1.element - frame), $1.offset) }
            .prefix(max(0, limit - selected.count)).map(\.element)
        selected += remaining
        // Selected in upstream's dict order (before, after, the rest by distance); the rest in insertion order.
        let chosen = Set(selected)
        return (selected, conditioningFrames.filter { !chosen.contains($0) })
    }

    /// Drops the tracked frames `drop` says no later step can read.
    mutating func dropNonConditioning(where drop: (Int) -> Bool) {
        for frame in nonConditioning.keys where drop(frame) { nonConditioning[frame] = nil }
    }

    /// Removes a frame from the tracked frames (it became conditioning). ref: propagate_in_video_preflight
    mutating func removeNonConditioning(_ frame: Int) { nonConditioning[frame] = nil }
}
