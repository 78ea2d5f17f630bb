/// Moving boxes, points and masks from a crop's frame to the original image's, and the filter of
/// masks cut off by a crop's edge.

/// `is_box_near_crop_edge` for one mask box (in crop coordinates): true when, after moving the box
/// into the image frame, some side is within `atol` of the crop box's same side but not within
/// `atol` of the original image box's same side (x0 with x0, y0 with y0, x1 with x1, y1 with y1).
///
/// As upstream: the moved box is added in integers, then every value is rounded to float32, and
/// closeness is `torch.isclose(a, b, atol, rtol=0)` in float32: `a == b` or `|a - b| <= Float(atol)`.
/// Note the mask box's inclusive x1/y1 is compared with the crop box's exclusive one, so a mask
/// touching the crop's right edge has x1 = crop.x1 - 1.
// ref: segment_anything/utils/amg.py is_box_near_crop_edge
package func isBoxNearCropEdge(_ box: PixelBox, cropBox: PixelBox, originalBox: PixelBox, atol: Double = 20) -> Bool {
    let moved = box.uncropped(from: cropBox)
    let tolerance = Float(atol)
    @inline(__always) func isClose(_ a: Int, _ b: Int) -> Bool {
        let a = Float(a), b = Float(b)
        if a == b { return true }
        let error = abs(a - b)
        return error.isFinite && error <= tolerance
    }
    let values = (moved.x0, moved.y0, moved.x1, moved.y1)
    return (isClose(values.0, cropBox.x0) && !isClose(values.0, originalBox.x0))
        || (isClose(values.1, cropBox.y0) && !isClose(values.1, originalBox.y0))
        || (isClose(values.2, cropBox.x1) && !isClose(values.2, originalBox.x1))
        || (isClose(values.3, cropBox.y1) && !isClose(values.3, originalBox.y1))
}

extension PixelBox {
    /// `uncrop_boxes_xyxy`: the box moved from `cropBox`'s frame to the image's (+x0, +y0 on both corners).
    // ref: segment_anything/utils/amg.py uncrop_boxes_xyxy
    package func uncropped(from cropBox: PixelBox) -> PixelBox {
        // Wrapping, as torch's int64 addition (no real box comes near).
        PixelBox(x0: x0 &+ cropBox.x0, y0: y0 &+ cropBox.y0, x1: x1 &+ cropBox.x0, y1: y1 &+ cropBox.y0)
    }
}

/// `uncrop_points`: a point (x, y) moved from `cropBox`'s frame to the image's. The integer offset is
/// rounded to the point's type first, as torch does adding an int64 tensor to a float one (SAM's
/// generator keeps its points in float64, SAM 2's in float32).
// ref: segment_anything/utils/amg.py uncrop_points
package func uncropPoint<Scalar: BinaryFloatingPoint & SIMDScalar>(_ point: SIMD2<Scalar>, from cropBox: PixelBox) -> SIMD2<Scalar> {
    point + SIMD2(Scalar(cropBox.x0), Scalar(cropBox.y0))
}

extension BinaryMask {
    /// `uncrop_masks`: this crop-sized mask padded with zeros into the original image at the crop
    /// box's corner (returned as is when the crop is the whole image).
    ///
    /// To RLE-encode the result, `UncompressedRLE(mask:uncroppedFrom:originalHeight:originalWidth:)`
    /// gives the same counts without building the padded mask.
    ///
    /// - Throws: if the mask is not the crop box's size or the box is not inside the image.
    // ref: segment_anything/utils/amg.py uncrop_masks
    package func uncropped(from cropBox: PixelBox, originalHeight: Int, originalWidth: Int) throws(SAMEverythingError) -> BinaryMask {
        try checkCropPlacement(mask: self, cropBox: cropBox, originalHeight: originalHeight, originalWidth: originalWidth)
        if cropBox == PixelBox(x0: 0, y0: 0, x1: originalWidth, y1: originalHeight) { return self }
        var padded = [UInt8](repeating: 0, count: originalWidth * originalHeight)
        if width > 0 {
            padded.withUnsafeMutableBufferPointer { target in
                pixels.withUnsafeBufferPointer { source in
                    guard let targetBase = target.baseAddress, let sourceBase = source.baseAddress else { return }
                    for row in 0..<height {
                        (targetBase + (row + cropBox.y0) * originalWidth + cropBox.x0)
                            .update(from: sourceBase + row * width, count: width)
                    }
                }
            }
        }
        return BinaryMask(unchecked: originalWidth, height: originalHeight, pixels: padded)
    }
}
