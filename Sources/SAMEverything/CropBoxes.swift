/// `generate_crop_boxes`: the whole image (layer 0), then for each layer i ≥ 1 a grid of
/// 2^i × 2^i overlapping crops, listed x-major (for each x0, every y0), as `itertools.product` does.
///
/// Boxes are XYXY with exclusive right/bottom edges, clipped to the image. Arithmetic follows
/// Python's: `overlap = int(overlap_ratio * short_side * (2 / n))` (float64, truncated),
/// `crop_len = int(ceil((overlap * (n - 1) + len) / n))` (true division), x0 = (crop_w - overlap) * i.
///
/// - Returns: the boxes and, for each, its layer index (0 for the whole image).
// ref: segment_anything/utils/amg.py generate_crop_boxes
package func generateCropBoxes(imageHeight: Int, imageWidth: Int, layerCount: Int, overlapRatio: Double) throws(SAMEverythingError) -> (boxes: [PixelBox], layerIndices: [Int]) {
    // Below 2^31 (and overlaps likewise), no product or sum below can overflow, and every
    // numerator is exact in a Double.
    guard imageHeight >= 0, imageWidth >= 0, imageHeight < 1 << 31, imageWidth < 1 << 31 else {
        throw SAMEverythingError("image size \(imageWidth)x\(imageHeight) must be in 0..<2^31")
    }
    guard overlapRatio.isFinite else {
        throw SAMEverythingError("the crop overlap ratio must be finite, got \(overlapRatio)")
    }
    // 2^(layer+1) crops per side: past 2^15 the crop lists alone would not fit in memory.
    guard layerCount <= 14 else {
        throw SAMEverythingError("\(layerCount) crop layers is too many (at most 14)")
    }
    let shortSide = min(imageHeight, imageWidth)
    var boxes = [PixelBox(x0: 0, y0: 0, x1: imageWidth, y1: imageHeight)]
    var layerIndices = [0]

    func cropLength(_ originalLength: Int, _ cropsPerSide: Int, _ overlap: Int) -> Int {
        let numerator = overlap * (cropsPerSide - 1) + originalLength
        return Int((Double(numerator) / Double(cropsPerSide)).rounded(.up))
    }

    for layer in 0..<max(layerCount, 0) {
        let cropsPerSide = 1 << (layer + 1)
        let overlapValue = overlapRatio * Double(shortSide) * (2 / Double(cropsPerSide))
        guard abs(overlapValue) < 0x1p31 else {
            throw SAMEverythingError("crop overlap \(overlapValue) is out of range")
        }
        let overlap = Int(overlapValue)  // int() truncates toward zero
        let cropWidth = cropLength(imageWidth, cropsPerSide, overlap)
        let cropHeight = cropLength(imageHeight, cropsPerSide, overlap)
        for i in 0..<cropsPerSide {
            let x0 = (cropWidth - overlap) * i
            for j in 0..<cropsPerSide {
                let y0 = (cropHeight - overlap) * j
                boxes.append(PixelBox(x0: x0, y0: y0, x1: min(x0 + cropWidth, imageWidth), y1: min(y0 + cropHeight, imageHeight)))
                layerIndices.append(layer + 1)
            }
        }
    }
    return (boxes, layerIndices)
}
