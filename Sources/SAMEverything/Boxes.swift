/// An integer box in XYXY order, the format upstream keeps crop boxes and mask boxes in.
///
/// Upstream uses one format for two conventions: crop boxes (`generate_crop_boxes`) have an
/// *exclusive* right/bottom edge (x1 = x0 + width), while mask boxes (`batched_mask_to_box`) have
/// an *inclusive* one (the index of the last set column/row), so a one-pixel mask's box has zero
/// width and zero area. Both are kept as upstream has them.
package struct PixelBox: Sendable, Hashable, CustomStringConvertible {
    package var x0: Int
    package var y0: Int
    package var x1: Int
    package var y1: Int

    package init(x0: Int, y0: Int, x1: Int, y1: Int) {
        self.x0 = x0
        self.y0 = y0
        self.x1 = x1
        self.y1 = y1
    }

    /// [0, 0, 0, 0]: what `batched_mask_to_box` returns for an empty mask.
    package static let zero = PixelBox(x0: 0, y0: 0, x1: 0, y1: 0)

    /// The four values in upstream's order [x0, y0, x1, y1].
    package var xyxy: [Int] { [x0, y0, x1, y1] }

    /// `box_xyxy_to_xywh`: [x0, y0, x1 - x0, y1 - y0] (the "bbox" and "crop_box" of a record).
    // ref: segment_anything/utils/amg.py box_xyxy_to_xywh
    package var xywh: [Int] { [x0, y0, x1 &- x0, y1 &- y0] }  // int64 arithmetic wraps, as torch's

    /// The box as float32 coordinates, as upstream's `boxes.float()` before NMS.
    package var floatBox: FloatBox {
        FloatBox(x0: Float(x0), y0: Float(y0), x1: Float(x1), y1: Float(y1))
    }

    /// `1 / box_area(box)` as torch computes it for int64 boxes: the area (x1 - x0) * (y1 - y0) in
    /// integers, rounded to float32, then 1 / area in float32. The generator's cross-crop NMS
    /// scores each mask by this of its crop box, so masks from smaller crops win.
    // ref: segment_anything/automatic_mask_generator.py _generate_masks (scores = 1 / box_area(crop_boxes))
    package var reciprocalArea: Float { 1 / Float((x1 &- x0) &* (y1 &- y0)) }

    package var description: String { "[\(x0), \(y0), \(x1), \(y1)]" }
}

/// A float32 box in XYXY order: what torchvision's NMS takes.
package struct FloatBox: Sendable, Hashable, CustomStringConvertible {
    package var x0: Float
    package var y0: Float
    package var x1: Float
    package var y1: Float

    package init(x0: Float, y0: Float, x1: Float, y1: Float) {
        self.x0 = x0
        self.y0 = y0
        self.x1 = x1
        self.y1 = y1
    }

    /// (x1 - x0) * (y1 - y0) in float32, as torchvision's NMS kernel computes it (no clamping).
    @inline(__always)
    package var area: Float { (x1 - x0) * (y1 - y0) }

    package var description: String { "[\(x0), \(y0), \(x1), \(y1)]" }
}
