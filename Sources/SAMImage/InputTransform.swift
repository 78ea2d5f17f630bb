import SAMTensor

/// How a model family's predictor maps a photo to the model input, prompts to the input frame and
/// low-res mask logits back to the photo: SAM's `SamPredictor` (longest side resized, padded; masks
/// upscaled to the padded square, cropped, then resized), SAM 2's `SAM2ImagePredictor` (stretched
/// to the square; masks resized straight to the photo's size), or a family's own
/// (`InputTransforming`; the family's encoder configuration says which).
public struct InputTransform: Sendable, Equatable {
    package let base: any InputTransforming

    package init(_ base: any InputTransforming) {
        self.base = base
    }

    /// Whether both are the same family's transform with the same sizes and statistics.
    public static func == (lhs: InputTransform, rhs: InputTransform) -> Bool {
        lhs.base.isEqual(to: rhs.base)
    }

    /// The square input's side.
    public var side: Int { base.side }

    /// [1, 3, side, side] and the resized image's size inside it (upstream's `input_size`).
    package func prepare(_ image: RGBImage) throws(ImageError) -> (input: FloatTensor, inputSize: ImageSize) {
        try base.prepare(image)
    }

    /// The resized image's size inside the square input, for an image of `originalSize`.
    public func inputSize(for originalSize: ImageSize) -> ImageSize {
        base.inputSize(for: originalSize)
    }

    /// Per-channel mean and std the input is normalised with, in the family's pixel scale.
    package var pixelStatistics: (mean: [Float], std: [Float]) { base.pixelStatistics }

    /// x, y pairs in original-image pixels -> the model input's frame.
    package func applyCoords(_ points: [Float], originalSize: ImageSize) throws(ImageError) -> [Float] {
        try base.applyCoords(points, originalSize: originalSize)
    }

    /// Binary masks at the original size from low-res logits [1, K, h, w], thresholded at 0.
    package func masks(_ lowRes: FloatTensor, inputSize: ImageSize, originalSize: ImageSize) throws(ImageError) -> BinaryMasks {
        let (postprocessor, size) = try base.maskUpscaling(for: lowRes, inputSize: inputSize)
        return try postprocessor.masks(lowRes, inputSize: size, originalSize: originalSize)
    }

    /// The same masks, binarised at `threshold`, with each mask's stability counts at `offset`
    /// (`MaskPostprocessor.masksWithStability`): what the automatic mask generator keeps of its masks.
    package func masksWithStability(_ lowRes: FloatTensor, inputSize: ImageSize, originalSize: ImageSize, threshold: Double,
                                   offset: Double) throws(ImageError) -> (masks: BinaryMasks, stability: [StabilityCounts]) {
        var (postprocessor, size) = try base.maskUpscaling(for: lowRes, inputSize: inputSize)
        postprocessor.maskThreshold = Float(threshold)
        return try postprocessor.masksWithStability(lowRes, inputSize: size, originalSize: originalSize, offset: offset)
    }
}
