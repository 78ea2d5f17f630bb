/// Box non-maximum suppression with torchvision's CPU semantics.
///
/// - Boxes are float32 XYXY; areas are `(x1 - x0) * (y1 - y0)` in float32, unclamped; the IoU is
///   `inter / (area_i + area_j - inter)` in float32, with the intersection's sides clamped at 0.
/// - A box is suppressed when `IoU > iouThreshold` **strictly**, the float32 IoU compared with the
///   float64 threshold (the kernel's `ovr > iou_threshold` with `double iou_threshold`): an IoU of
///   exactly 0.5 survives a 0.5 threshold, and 7/10 (0.699999988 in float32) survives 0.7.
///   Zero-area boxes (one-pixel masks' boxes) give 0 / 0 = NaN, which never suppresses.
/// - Order: scores descending with a **stable** sort, i.e. equal scores keep ascending index
///   order, which is what `nms_kernel_impl` does (`scores.sort(stable=true, descending=true)`).
///   NaN scores sort first, as torch's sort puts NaN above every number.
/// - The result lists the kept indices by decreasing score (ties by ascending index).
// ref: torchvision/csrc/ops/cpu/nms_kernel.cpp nms_kernel_impl
// ref: torchvision/ops/boxes.py nms
package func nms(boxes: [FloatBox], scores: [Float], iouThreshold: Double) throws(SAMEverythingError) -> [Int] {
    guard boxes.count == scores.count else {
        throw SAMEverythingError("nms: \(boxes.count) boxes but \(scores.count) scores")
    }
    return suppress(boxes: boxes, scores: scores, iouThreshold: iouThreshold)
}

/// `batched_nms`: NMS within each category, never across categories. The result is the kept
/// indices by decreasing score.
///
/// Mirrors torchvision's two paths, since they can differ in the last bit:
/// - up to 1,000 boxes (`boxes.numel() <= 4000` on the CPU): the coordinate trick, every box
///   shifted by `Float(category) * (max coordinate + 1)` in float32 and one `nms` over all. Large
///   offsets round the shifted coordinates, which can change an IoU near the threshold; this port
///   rounds the same way. (The generator's categories are all 0, where the shift is exactly 0.)
/// - more than 1,000 boxes: `nms` per category on the original coordinates, then the kept indices
///   re-sorted by score. torchvision re-sorts with torch's *unstable* sort, so among equal scores
///   its order there depends on std::sort's internals; this port keeps ties in ascending index
///   order. The kept set is identical; only the order among exactly equal scores may differ.
// ref: torchvision/ops/boxes.py batched_nms, _batched_nms_coordinate_trick, _batched_nms_vanilla
package func batchedNMS(boxes: [FloatBox], scores: [Float], categories: [Int], iouThreshold: Double) throws(SAMEverythingError) -> [Int] {
    guard boxes.count == scores.count, boxes.count == categories.count else {
        throw SAMEverythingError("batched_nms: \(boxes.count) boxes, \(scores.count) scores and \(categories.count) categories")
    }
    guard !boxes.isEmpty else { return [] }
    if boxes.count * 4 > 4000 {
        return perCategoryNMS(boxes: boxes, scores: scores, categories: categories, iouThreshold: iouThreshold)
    }
    // torch's max propagates NaN; so does this fold (a NaN coordinate makes every offset NaN).
    var maxCoordinate = -Float.infinity
    var sawNaN = false
    for box in boxes {
        sawNaN = sawNaN || box.x0.isNaN || box.y0.isNaN || box.x1.isNaN || box.y1.isNaN
        maxCoordinate = max(maxCoordinate, box.x0, box.y0, box.x1, box.y1)
    }
    if sawNaN { maxCoordinate = .nan }
    let stride = maxCoordinate + 1
    var shifted = boxes
    for i in shifted.indices {
        let offset = Float(categories[i]) * stride
        shifted[i].x0 += offset
        shifted[i].y0 += offset
        shifted[i].x1 += offset
        shifted[i].y1 += offset
    }
    return suppress(boxes: shifted, scores: scores, iouThreshold: iouThreshold)
}

/// torchvision's `_batched_nms_vanilla`, with a stable final sort.
private func perCategoryNMS(boxes: [FloatBox], scores: [Float], categories: [Int], iouThreshold: Double) -> [Int] {
    var members = [Int: [Int]]()
    for (index, category) in categories.enumerated() {
        members[category, default: []].append(index)
    }
    var keep = [Bool](repeating: false, count: boxes.count)
    for (_, indices) in members {
        let kept = suppress(boxes: indices.map { boxes[$0] }, scores: indices.map { scores[$0] }, iouThreshold: iouThreshold)
        for local in kept { keep[indices[local]] = true }
    }
    let keptIndices = keep.indices.filter { keep[$0] }
    return keptIndices.sorted { comesFirst($0, $1, scores) }
}

/// Scores descending, NaN first, ties by ascending index: a total order, so Swift's (unstable)
/// sort gives what a stable descending sort gives.
@inline(__always)
private func comesFirst(_ a: Int, _ b: Int, _ scores: [Float]) -> Bool {
    let scoreA = scores[a]
    let scoreB = scores[b]
    if scoreA.isNaN || scoreB.isNaN {
        if scoreA.isNaN && scoreB.isNaN { return a < b }
        return scoreA.isNaN
    }
    if scoreA != scoreB { return scoreA > scoreB }
    return a < b
}

/// The body of `nms_kernel_impl`.
private func suppress(boxes: [FloatBox], scores: [Float], iouThreshold: Double) -> [Int] {
    let count = boxes.count
    guard count > 0 else { return [] }
    let order = (0..<count).sorted { comesFirst($0, $1, scores) }
    // Structure of arrays in score order, so the inner loop streams through memory.
    var x0 = [Float](), y0 = [Float](), x1 = [Float](), y1 = [Float](), areas = [Float]()
    x0.reserveCapacity(count); y0.reserveCapacity(count); x1.reserveCapacity(count)
    y1.reserveCapacity(count); areas.reserveCapacity(count)
    for index in order {
        let box = boxes[index]
        x0.append(box.x0); y0.append(box.y0); x1.append(box.x1); y1.append(box.y1)
        areas.append(box.area)
    }
    var suppressed = [Bool](repeating: false, count: count)
    var kept = [Int]()
    x0.withUnsafeBufferPointer { x0 in y0.withUnsafeBufferPointer { y0 in
    x1.withUnsafeBufferPointer { x1 in y1.withUnsafeBufferPointer { y1 in
    areas.withUnsafeBufferPointer { areas in suppressed.withUnsafeMutableBufferPointer { suppressed in
        for i in 0..<count where !suppressed[i] {
            kept.append(order[i])
            let ix0 = x0[i], iy0 = y0[i], ix1 = x1[i], iy1 = y1[i], iarea = areas[i]
            var j = i + 1
            while j < count {
                defer { j += 1 }
                if suppressed[j] { continue }
                // std::max / std::min: max(a, b) is (a < b) ? b : a, min(a, b) is (b < a) ? b : a.
                let xx0 = ix0 < x0[j] ? x0[j] : ix0
                let yy0 = iy0 < y0[j] ? y0[j] : iy0
                let xx1 = x1[j] < ix1 ? x1[j] : ix1
                let yy1 = y1[j] < iy1 ? y1[j] : iy1
                let w = Float(0) < xx1 - xx0 ? xx1 - xx0 : 0
                let h = Float(0) < yy1 - yy0 ? yy1 - yy0 : 0
                let inter = w * h
                let overlap = inter / (iarea + areas[j] - inter)
                if Double(overlap) > iouThreshold {
                    suppressed[j] = true
                }
            }
        }
    } } } } } }
    return kept
}
