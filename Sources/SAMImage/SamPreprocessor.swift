import SAMTensor

/// Normalises a resized uint8 image and pads it to the encoder's square input.
/// ref: mobile_sam/modeling/sam.py Sam.preprocess (pixel_mean, pixel_std buffers; F.pad right/bottom)
public struct SamPreprocessor: Sendable, Equatable {
    /// Per-channel mean (R, G, B) subtracted, in 0-255 units.
    /// ref: sam.py Sam.__init__ defaults / build_sam.py: [123.675, 116.28, 103.53]
    public var pixelMean: [Float]
    /// Per-channel standard deviation (R, G, B) divided by, in 0-255 units.
    /// ref: sam.py Sam.__init__ defaults / build_sam.py: [58.395, 57.12, 57.375]
    public var pixelStd: [Float]
    /// The encoder's input side (image_encoder.img_size).
    public var imageSize: Int

    package init(pixelMean: [Float] = [123.675, 116.28, 103.53], pixelStd: [Float] = [58.395, 57.12, 57.375],
                imageSize: Int = 1024) {
        precondition(pixelMean.count == 3 && pixelStd.count == 3, "SamPreprocessor: mean and std need 3 values")
        self.pixelMean = pixelMean
        self.pixelStd = pixelStd
        self.imageSize = imageSize
    }

    /// `resized` (the output of `ResizeLongestSide.apply`) to [1, 3, imageSize, imageSize] float32:
    /// (x - mean) / std per channel in float32, as torch computes it (a true division, not a
    /// multiplication by 1/std), zeros right and below.
    package func callAsFunction(_ resized: RGBImage) throws(ImageError) -> FloatTensor {
        let side = imageSize
        guard resized.width <= side, resized.height <= side else {
            throw ImageError(.invalidArgument, file: "<memory>",
                             "a \(resized.width)x\(resized.height) image does not fit the \(side)x\(side) input; resize it first")
        }
        var data = [Float](repeating: 0, count: 3 * side * side)
        let width = resized.width
        resized.pixels.withUnsafeBufferPointer { pixels in
            data.withUnsafeMutableBufferPointer { out in
                for channel in 0..<3 {
                    // ref: sam.py Sam.preprocess: x = (x - self.pixel_mean) / self.pixel_std
                    let mean = pixelMean[channel], std = pixelStd[channel]
                    var table = [Float](repeating: 0, count: 256)
                    for level in 0..<256 { table[level] = (Float(level) - mean) / std }
                    let plane = channel * side * side
                    for y in 0..<resized.height {
                        let row = plane + y * side
                        let source = y * width * 3 + channel
                        for x in 0..<width { out[row + x] = table[Int(pixels[source + x * 3])] }
                    }
                }
            }
        }
        // ref: sam.py Sam.preprocess: x = F.pad(x, (0, padw, 0, padh)) (zeros already there)
        return FloatTensor(shape: [1, 3, side, side], data: data)
    }

    /// The whole `SamPredictor.set_image` input path: resize the long side to `imageSize`,
    /// normalise, pad. Returns the tensor and the resized (H, W), upstream's `input_size`.
    package func prepare(_ image: RGBImage) throws(ImageError) -> (input: FloatTensor, inputSize: ImageSize) {
        let resized = try ResizeLongestSide(targetLength: imageSize).apply(image)
        return (try self(resized), resized.size)
    }
}
