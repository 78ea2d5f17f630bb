import SAMTensor

/// SAM 2's image transform (`SAM2Transforms`): the photo as a float tensor in [0, 1] (ToTensor),
/// resized to side x side without keeping its aspect (torchvision's Resize: antialiased bilinear),
/// normalised per channel with ImageNet's statistics in 0-1 units. Prompt coordinates are divided by
/// the original size and multiplied by the side (`transform_coords(normalize=True)`).
/// ref: sam2/utils/transforms.py SAM2Transforms
public struct SquarePreprocessor: Sendable, Equatable {
    /// The encoder's square input side, in pixels.
    public var side: Int
    /// Per-channel mean (R, G, B) subtracted, in 0-1 units.
    /// ref: SAM2Transforms.__init__ — mean [0.485, 0.456, 0.406], std [0.229, 0.224, 0.225]
    public var pixelMean: [Float]
    /// Per-channel standard deviation (R, G, B) divided by, in 0-1 units.
    public var pixelStd: [Float]

    package init(side: Int = 1024, pixelMean: [Float] = [0.485, 0.456, 0.406], pixelStd: [Float] = [0.229, 0.224, 0.225]) {
        precondition(pixelMean.count == 3 && pixelStd.count == 3, "SquarePreprocessor: mean and std need 3 values")
        self.side = side
        self.pixelMean = pixelMean
        self.pixelStd = pixelStd
    }

    /// [1, 3, side, side] float32. ref: SAM2Transforms.__call__ — to_tensor, Resize((side, side)), Normalize
    package func callAsFunction(_ image: RGBImage) throws(ImageError) -> FloatTensor {
        guard image.width > 0, image.height > 0 else {
            throw ImageError(.invalidArgument, file: "<memory>", "cannot resize an empty \(image.width)x\(image.height) image")
        }
        let width = image.width, height = image.height, plane = width * height
        // ref: torchvision ToTensor — img.permute(2, 0, 1).float().div(255)
        var planes = [Float](repeating: 0, count: 3 * plane)
        image.pixels.withUnsafeBufferPointer { pixels in
            for channel in 0..<3 {
                for i in 0..<plane { planes[channel * plane + i] = Float(pixels[i * 3 + channel]) / 255 }
            }
        }
        var resized = AntialiasedBilinear.resize(planes, count: 3, height: height, width: width, toHeight: side, width: side)
        // ref: torchvision Normalize — tensor.sub_(mean).div_(std)
        let count = side * side
        for channel in 0..<3 {
            let mean = pixelMean[channel], std = pixelStd[channel]
            for i in (channel * count)..<((channel + 1) * count) { resized[i] = (resized[i] - mean) / std }
        }
        return FloatTensor(shape: [1, 3, side, side], data: resized)
    }

    /// The model input and its size inside it (the whole square).
    package func prepare(_ image: RGBImage) throws(ImageError) -> (input: FloatTensor, inputSize: ImageSize) {
        (try self(image), ImageSize(height: side, width: side))
    }

    /// ref: SAM2Transforms.transform_coords(normalize=True) — x / w, y / h, then * resolution, in float32.
    /// `points` holds x, y pairs in original-image pixels.
    package func applyCoords(_ points: [Float], originalSize: ImageSize) throws(ImageError) -> [Float] {
        guard points.count.isMultiple(of: 2) else {
            throw ImageError(.invalidArgument, file: "<memory>", "\(points.count) coordinates are not x, y pairs")
        }
        guard originalSize.height > 0, originalSize.width > 0 else {
            throw ImageError(.invalidArgument, file: "<memory>", "original size \(originalSize) is empty")
        }
        let width = Float(originalSize.width), height = Float(originalSize.height), resolution = Float(side)
        return points.indices.map { index in
            (index.isMultiple(of: 2) ? points[index] / width : points[index] / height) * resolution
        }
    }
}
