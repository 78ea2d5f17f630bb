/// SAM's `ResizeLongestSide`: scales an image so its longer side is `targetLength` and maps
/// prompt coordinates the same way. ref: mobile_sam/utils/transforms.py ResizeLongestSide
package struct ResizeLongestSide: Sendable, Equatable {
    package let targetLength: Int

    package init(targetLength: Int = 1024) {
        precondition(targetLength > 0, "ResizeLongestSide: target length must be positive")
        self.targetLength = targetLength
    }

    /// ref: transforms.py ResizeLongestSide.get_preprocess_shape:
    /// scale = L * 1.0 / max(h, w); new = int(old * scale + 0.5), in double precision.
    package func targetSize(height: Int, width: Int) -> ImageSize {
        let scale = Double(targetLength) * 1.0 / Double(max(height, width))
        let newHeight = Double(height) * scale, newWidth = Double(width) * scale
        return ImageSize(height: Int(newHeight + 0.5), width: Int(newWidth + 0.5))
    }

    package func targetSize(_ size: ImageSize) -> ImageSize { targetSize(height: size.height, width: size.width) }

    /// ref: transforms.py ResizeLongestSide.apply_image: `np.array(resize(to_pil_image(image),
    /// target_size))`, i.e. Pillow's antialiased bilinear resize of the uint8 image.
    package func apply(_ image: RGBImage) throws(ImageError) -> RGBImage {
        guard image.width > 0, image.height > 0 else {
            throw ImageError(.invalidArgument, file: "<memory>", "cannot resize an empty \(image.width)x\(image.height) image")
        }
        let size = targetSize(height: image.height, width: image.width)
        guard size.width > 0, size.height > 0 else {
            throw ImageError(.invalidArgument, file: "<memory>",
                             "a \(image.width)x\(image.height) image resizes to \(size.width)x\(size.height) at long side \(targetLength)")
        }
        return try PILResize.resize(image, width: size.width, height: size.height)
    }

    /// ref: transforms.py ResizeLongestSide.apply_coords: x *= new_w / old_w, y *= new_h / old_h
    /// in float64 (the predictor then casts to float32). `points` holds x, y pairs in original
    /// image pixels; the result is in the resized (model input) frame.
    package func applyCoords<Value: BinaryFloatingPoint>(_ points: [Value], originalSize: ImageSize) throws(ImageError) -> [Float] {
        guard points.count.isMultiple(of: 2) else {
            throw ImageError(.invalidArgument, file: "<memory>", "\(points.count) coordinates are not x, y pairs")
        }
        guard originalSize.height > 0, originalSize.width > 0 else {
            throw ImageError(.invalidArgument, file: "<memory>", "original size \(originalSize) is empty")
        }
        let new = targetSize(originalSize)
        let scaleX = Double(new.width) / Double(originalSize.width)
        let scaleY = Double(new.height) / Double(originalSize.height)
        var mapped = [Float](repeating: 0, count: points.count)
        for index in stride(from: 0, to: points.count, by: 2) {
            // Float and Double inputs widen exactly, so both give upstream's float64 result.
            mapped[index] = Float(Double(points[index]) * scaleX)
            mapped[index + 1] = Float(Double(points[index + 1]) * scaleY)
        }
        return mapped
    }

    /// ref: transforms.py ResizeLongestSide.apply_boxes: each x0, y0, x1, y1 box as two corners.
    package func applyBoxes<Value: BinaryFloatingPoint>(_ boxes: [Value], originalSize: ImageSize) throws(ImageError) -> [Float] {
        guard boxes.count.isMultiple(of: 4) else {
            throw ImageError(.invalidArgument, file: "<memory>", "\(boxes.count) values are not x0, y0, x1, y1 boxes")
        }
        return try applyCoords(boxes, originalSize: originalSize)
    }
}
