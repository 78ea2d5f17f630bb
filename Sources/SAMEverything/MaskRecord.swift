/// A mask the generator is still deciding about: upstream's `MaskData` row (rle, boxes, iou_preds,
/// points, stability_score, crop_boxes). Boxes are XYXY in the crop's frame until the crop is done,
/// then in the image's.
struct MaskRecord: Sendable {
    var rle: UncompressedRLE
    var box: PixelBox
    var predictedIoU: Float
    /// The prompt point (x, y), float64 as SAM's generator keeps it.
    var point: SIMD2<Double>
    var stabilityScore: Float
    var cropBox: PixelBox

    /// The box and point moved from the crop's frame into the image's; `float32Points`: the point is
    /// moved in float32, as SAM 2's generator keeps its points.
    /// ref: automatic_mask_generator.py _process_crop (uncrop_boxes_xyxy, uncrop_points)
    func uncropped(from crop: PixelBox, float32Points: Bool) -> MaskRecord {
        var moved = self
        moved.box = box.uncropped(from: crop)
        if float32Points {
            let moved32 = uncropPoint(SIMD2(Float(point.x), Float(point.y)), from: crop)
            moved.point = SIMD2(Double(moved32.x), Double(moved32.y))
        } else {
            moved.point = uncropPoint(point, from: crop)
        }
        return moved
    }

    /// ref: automatic_mask_generator.py generate (curr_anns)
    var annotation: MaskAnnotation {
        MaskAnnotation(segmentation: rle, area: rle.area, bbox: box.xywh, predictedIoU: predictedIoU,
                       pointCoords: [point.x, point.y], stabilityScore: stabilityScore, cropBox: cropBox.xywh)
    }
}
