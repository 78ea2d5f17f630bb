import Testing
@testable import SAMPipeline

/// `VideoTracker.keepHighestObject`, upstream's `_apply_non_overlapping_constraints` on the output logits.
@Suite("Pipeline: non-overlapping masks")
struct NonOverlappingMasksTests {
    @Test("the highest object keeps its logit, the others are clamped to at most -10; a tie goes to the first in precedence")
    func clampsAllButTheHighest() {
        // Three objects' planes of four pixels: a clear winner, a tie between planes 1 and 2, values below -10, a tie of all.
        var logits: [Float] = [5, 1, -20, 0,
                               2, 3, -30, 0,
                               -1, 3, -25, 0]
        // Planes in the order objects were prompted: plane 2 first, then 0, then 1.
        VideoTracker.keepHighestObject(&logits, objects: [2, 0, 1], plane: 4)
        #expect(logits == [5, -10, -20, -10,
                           -10, -10, -30, -10,
                           -10, 3, -25, 0])
        var single: [Float] = [4, -3]
        VideoTracker.keepHighestObject(&single, objects: [0], plane: 2)
        #expect(single == [4, -3])  // one object: unchanged, as upstream returns it
    }
}
