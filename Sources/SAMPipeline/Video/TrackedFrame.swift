import SAMTensor

/// What tracking gives for one frame: every object's full-resolution mask logits (before
/// thresholding at 0), its low-resolution logits and its object-score logit, objects in ascending id order.
public struct TrackedFrame: Sendable {
    /// The frame's position in the clip, from 0.
    public let frameIndex: Int
    /// The objects' IDs in ascending order: the order of the first dimension of `logits`, `lowResolutionLogits` and `objectScores`.
    public let objectIDs: [Int]
    /// [objects, 1, H, W] at the frame's size (`video_res_masks`).
    public let logits: FloatTensor
    /// [objects, 1, S/4, S/4] (`pred_masks`, holes filled).
    public let lowResolutionLogits: FloatTensor
    /// The object-score logit of each object (> 0: present).
    public let objectScores: [Float]

    /// Object `index`'s binary mask (logit > 0), row-major H x W.
    public func mask(_ index: Int) -> [Bool] {
        let plane = logits.shape[2] * logits.shape[3]
        return logits.data[(index * plane)..<((index + 1) * plane)].map { $0 > 0 }
    }
}
