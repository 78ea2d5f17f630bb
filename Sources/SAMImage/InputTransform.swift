import SAMTensor

/// How a model family's predictor maps a photo to the model input, prompts to the input frame and
/// low-res mask logits back to the photo: SAM's `SamPredictor` (longest side resized, padded; masks
/// upscaled to the padded square, cropped, then resized) or SAM 2's `SAM2ImagePredictor` (stretched
/// to the square; masks resized straight to the photo's size), or EfficientViT-SAM's predictor (SAM's
/// input at the encoder's side, prompts and masks in a larger frame of their own).
public enum InputTransform: Sendable, Equatable {
    /// ResizeLongestSide(side), normalise in 0-255 units, zero-pad to side x side.
    case longestSide(SamPreprocessor)
    /// The input as `longestSide` makes it; prompts, the crop and the mask upscaling in a `promptFrame`
    /// square, as if the input were that size. ref: efficientsam/models/efficientvit/sam.py
    /// EfficientViTSamPredictor.set_image (input_size = get_preprocess_shape(h, w, image_size[0])),
    /// apply_coords, EfficientViTSam.postprocess_masks
    case twoFrames(SamPreprocessor, promptFrame: Int)
    /// SAM2Transforms(side): stretch to side x side, normalise in 0-1 units.
    case square(SquarePreprocessor)

    /// The square input's side.
    public var side: Int {
        switch self {
        case .longestSide(let preprocessor), .twoFrames(let preprocessor, _): preprocessor.imageSize
        case .square(let preprocessor): preprocessor.side
        }
    }

    /// [1, 3, side, side] and the resized image's size inside it (upstream's `input_size`).
    package func prepare(_ image: RGBImage) throws(ImageError) -> (input: FloatTensor, inputSize: ImageSize) {
        switch self {
        case .longestSide(let preprocessor): try preprocessor.prepare(image)
        case .square(let preprocessor): try preprocessor.prepare(image)
        case .twoFrames(let preprocessor, let frame):
            (try preprocessor.prepare(image).input, ResizeLongestSide(targetLength: frame).targetSize(image.size))
        }
    }

    /// The resized image's size inside the square input, for an image of `originalSize`.
    public func inputSize(for originalSize: ImageSize) -> ImageSize {
        switch self {
        case .longestSide(let preprocessor): ResizeLongestSide(targetLength: preprocessor.imageSize).targetSize(originalSize)
        case .square(let preprocessor): ImageSize(height: preprocessor.side, width: preprocessor.side)
        case .twoFrames(_, let frame): ResizeLongestSide(targetLength: frame).targetSize(originalSize)
        }
    }

    /// Per-channel mean and std the input is normalised with, in the family's pixel scale.
    package var pixelStatistics: (mean: [Float], std: [Float]) {
        switch self {
        case .longestSide(let preprocessor), .twoFrames(let preprocessor, _): (preprocessor.pixelMean, preprocessor.pixelStd)
        case .square(let preprocessor): (preprocessor.pixelMean, preprocessor.pixelStd)
        }
    }

    /// x, y pairs in original-image pixels -> the model input's frame.
    package func applyCoords(_ points: [Float], originalSize: ImageSize) throws(ImageError) -> [Float] {
        switch self {
        case .longestSide(let preprocessor):
            try ResizeLongestSide(targetLength: preprocessor.imageSize).applyCoords(points, originalSize: originalSize)
        case .square(let preprocessor):
            try preprocessor.applyCoords(points, originalSize: originalSize)
        case .twoFrames(_, let frame):
            try ResizeLongestSide(targetLength: frame).applyCoords(points, originalSize: originalSize)
        }
    }

    /// Binary masks at the original size from low-res logits [1, K, h, w], thresholded at 0.
    /// SAM: bilinear to the padded square, crop `inputSize`, bilinear to the photo (Sam.postprocess_masks).
    /// SAM 2: bilinear from h x w straight to the photo (SAM2Transforms.postprocess_masks); the first
    /// resize is then h x w to itself, which gives every logit back unchanged (weights 1 and 0).
    package func masks(_ lowRes: FloatTensor, inputSize: ImageSize, originalSize: ImageSize) throws(ImageError) -> BinaryMasks {
        let (postprocessor, size) = try postprocessor(for: lowRes, inputSize: inputSize)
        return try postprocessor.masks(lowRes, inputSize: size, originalSize: originalSize)
    }

    /// The same masks, binarised at `threshold`, with each mask's stability counts at `offset`
    /// (`MaskPostprocessor.masksWithStability`): what the automatic mask generator keeps of its masks.
    package func masksWithStability(_ lowRes: FloatTensor, inputSize: ImageSize, originalSize: ImageSize, threshold: Double,
                                   offset: Double) throws(ImageError) -> (masks: BinaryMasks, stability: [StabilityCounts]) {
        var (postprocessor, size) = try postprocessor(for: lowRes, inputSize: inputSize)
        postprocessor.maskThreshold = Float(threshold)
        return try postprocessor.masksWithStability(lowRes, inputSize: size, originalSize: originalSize, offset: offset)
    }

    /// The family's upscaling: SAM's through the padded square; SAM 2's straight from the low-res side
    /// (a first resize of h x h to itself, which gives every logit back unchanged).
    private func postprocessor(for lowRes: FloatTensor, inputSize: ImageSize) throws(ImageError) -> (MaskPostprocessor, ImageSize) {
        switch self {
        case .longestSide(let preprocessor):
            return (MaskPostprocessor(imageSize: preprocessor.imageSize), inputSize)
        case .twoFrames(_, let frame):
            return (MaskPostprocessor(imageSize: frame), inputSize)
        case .square:
            guard lowRes.shape.count == 4, lowRes.shape[2] == lowRes.shape[3] else {
                throw ImageError(.invalidArgument, file: "<memory>", "low-res masks must be [B, K, h, h], got \(lowRes.shape)")
            }
            let side = lowRes.shape[2]
            return (MaskPostprocessor(imageSize: side), ImageSize(height: side, width: side))
        }
    }
}
