/// The stability score of one mask's logits: the IoU of the masks thresholded at
/// `maskThreshold + thresholdOffset` and at `maskThreshold - thresholdOffset`. With a non-negative
/// offset the first mask lies inside the second, so the IoU is count(> high) / count(> low).
///
/// Exactly as upstream computes it:
/// - the two cut-offs are summed in float64 (Python floats) and rounded to float32, and the logits
///   are compared strictly (`>`) in float32, so NaN logits count in neither;
/// - each row's count is summed into **int16** (`.sum(-1, dtype=torch.int16)`: it wraps for rows of
///   more than 32,767 counted pixels), the rows into int32 (wrapping past 2^31);
/// - the int32 ratio is a true division in float32 (both counts rounded to float32 first), so an
///   empty low mask gives 0 / 0 = NaN, and a negative offset can give a score above 1.
///
/// SAM 2's `calculate_stability_score` is the same function; SAM 2's generator passes its own
/// `mask_threshold` argument (default 0.0) where SAM's passes `model.mask_threshold` (0.0).
///
/// One pass over the logits, both counts at once.
// ref: segment_anything/utils/amg.py calculate_stability_score
// ref: sam2/utils/amg.py calculate_stability_score
public func stabilityScore(logits: UnsafeBufferPointer<Float>, width: Int, height: Int,
                           maskThreshold: Double, thresholdOffset: Double) throws(SAMEverythingError) -> Float {
    let counts = try stabilityCounts(logits: logits, width: width, height: height,
                                     maskThreshold: maskThreshold, thresholdOffset: thresholdOffset)
    return Float(counts.intersections) / Float(counts.unions)
}

/// `stabilityScore(logits:width:height:maskThreshold:thresholdOffset:)` on an array.
public func stabilityScore(logits: [Float], width: Int, height: Int,
                           maskThreshold: Double, thresholdOffset: Double) throws(SAMEverythingError) -> Float {
    try logits.withUnsafeBufferPointer { (buffer) throws(SAMEverythingError) -> Float in
        try stabilityScore(logits: buffer, width: width, height: height,
                           maskThreshold: maskThreshold, thresholdOffset: thresholdOffset)
    }
}

/// The two int32 counts behind the score (count(> high), count(> low)), with upstream's int16 row sums.
func stabilityCounts(logits: UnsafeBufferPointer<Float>, width: Int, height: Int,
                     maskThreshold: Double, thresholdOffset: Double) throws(SAMEverythingError) -> (intersections: Int32, unions: Int32) {
    let count = try checkedPixelCount(width: width, height: height, what: "logits")
    guard logits.count == count else {
        throw SAMEverythingError("logits of \(width)x\(height) need \(count) values, got \(logits.count)")
    }
    let high = Float(maskThreshold + thresholdOffset)
    let low = Float(maskThreshold - thresholdOffset)
    guard let base = logits.baseAddress, count > 0 else { return (0, 0) }
    if width <= Int(Int16.max) {
        // No row can wrap its int16 sum, so the int32 total is the whole count (mod 2^32).
        let (above, aboveLow) = countAbove(base, count, high, low)
        return (Int32(truncatingIfNeeded: above), Int32(truncatingIfNeeded: aboveLow))
    }
    var intersections: Int32 = 0
    var unions: Int32 = 0
    for row in 0..<height {
        let (above, aboveLow) = countAbove(base + row * width, width, high, low)
        intersections &+= Int32(Int16(truncatingIfNeeded: above))
        unions &+= Int32(Int16(truncatingIfNeeded: aboveLow))
    }
    return (intersections, unions)
}

/// How many of `count` floats are > high and > low: branch-free so it vectorises; chunks of at
/// most 2^31 keep the 32-bit lane sums exact.
@inline(__always)
private func countAbove(_ values: UnsafePointer<Float>, _ count: Int, _ high: Float, _ low: Float) -> (Int, Int) {
    var totalHigh = 0
    var totalLow = 0
    var start = 0
    while start < count {
        let end = min(count, start + Int(Int32.max))
        var aboveHigh: UInt32 = 0
        var aboveLow: UInt32 = 0
        for i in start..<end {
            let value = values[i]
            aboveHigh &+= value > high ? 1 : 0
            aboveLow &+= value > low ? 1 : 0
        }
        totalHigh += Int(aboveHigh)
        totalLow += Int(aboveLow)
        start = end
    }
    return (totalHigh, totalLow)
}
