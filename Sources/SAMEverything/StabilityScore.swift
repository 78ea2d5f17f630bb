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
package func stabilityScore(logits: UnsafeBufferPointer<Float>, width: Int, height: Int,
                           maskThreshold: Double, thresholdOffset: Double) throws(SAMEverythingError) -> Float {
    let counts = try stabilityCounts(logits: logits, width: width, height: height,
                                     maskThreshold: maskThreshold, thresholdOffset: thresholdOffset)
    return Float(counts.intersections) / Float(counts.unions)
}

/// `stabilityScore(logits:width:height:maskThreshold:thresholdOffset:)` on an array.
package func stabilityScore(logits: [Float], width: Int, height: Int,
                           maskThreshold: Double, thresholdOffset: Double) throws(SAMEverythingError) -> Float {
    try logits.withUnsafeBufferPointer { (buffer) throws(SAMEverythingError) -> Float in
        try stabilityScore(logits: buffer, width: width, height: height,
                           maskThreshold: maskThreshold, thresholdOffset: thresholdOffset)
    }
}

/// `calculate_stability_score` over a batch: `logits` holds `maskCount` masks of height × width,
/// one after another (upstream's B×H×W tensor), and the result has one score per mask.
package func stabilityScores(logits: UnsafeBufferPointer<Float>, maskCount: Int, width: Int, height: Int,
                            maskThreshold: Double, thresholdOffset: Double) throws(SAMEverythingError) -> [Float] {
    let size = try checkedPixelCount(width: width, height: height, what: "logits")
    let (total, overflow) = size.multipliedReportingOverflow(by: maskCount)
    guard maskCount >= 0, !overflow, logits.count == total else {
        throw SAMEverythingError("\(maskCount) masks of \(width)x\(height) need \(maskCount) × \(size) logits, got \(logits.count)")
    }
    var scores = [Float]()
    scores.reserveCapacity(maskCount)
    for mask in 0..<maskCount {
        let slice = UnsafeBufferPointer(rebasing: logits[(mask * size)..<((mask + 1) * size)])
        scores.append(try stabilityScore(logits: slice, width: width, height: height,
                                         maskThreshold: maskThreshold, thresholdOffset: thresholdOffset))
    }
    return scores
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

/// How many of `count` floats are > high and > low, sixteen lanes at a time: a true lane of a
/// comparison mask is all ones (-1), so subtracting the mask counts it. The lane sums are exact for
/// chunks of up to 2^31 values per lane.
@inline(__always)
private func countAbove(_ values: UnsafePointer<Float>, _ count: Int, _ high: Float, _ low: Float) -> (Int, Int) {
    typealias Lanes = SIMD16<Float>
    let laneCount = Lanes.scalarCount
    let highLanes = Lanes(repeating: high)
    let lowLanes = Lanes(repeating: low)
    let raw = UnsafeRawPointer(values)
    var totalHigh = 0
    var totalLow = 0
    var i = 0
    while count - i >= laneCount {
        let chunkEnd = i + min((count - i) / laneCount, Int(Int32.max)) * laneCount
        var aboveHigh = SIMD16<Int32>()
        var aboveLow = SIMD16<Int32>()
        while i < chunkEnd {
            let lanes = raw.loadUnaligned(fromByteOffset: i * MemoryLayout<Float>.stride, as: Lanes.self)
            aboveHigh &-= unsafeBitCast(lanes .> highLanes, to: SIMD16<Int32>.self)
            aboveLow &-= unsafeBitCast(lanes .> lowLanes, to: SIMD16<Int32>.self)
            i += laneCount
        }
        totalHigh += aboveHigh.indices.reduce(0) { $0 + Int(UInt32(bitPattern: aboveHigh[$1])) }
        totalLow += aboveLow.indices.reduce(0) { $0 + Int(UInt32(bitPattern: aboveLow[$1])) }
    }
    while i < count {
        totalHigh += values[i] > high ? 1 : 0
        totalLow += values[i] > low ? 1 : 0
        i += 1
    }
    return (totalHigh, totalLow)
}
