import SAMTensor

/// SAM 2's `SAM2ImagePredictor`: the photo stretched to the square input; prompts divided by the
/// photo's size and times the side; masks resized straight from the low-res side to the photo (the
/// first resize, h x h to itself, gives every logit back unchanged).
/// ref: sam2/utils/transforms.py SAM2Transforms.postprocess_masks
extension SquarePreprocessor: InputTransforming {
    package func inputSize(for originalSize: ImageSize) -> ImageSize {
        ImageSize(height: side, width: side)
    }

    package var pixelStatistics: (mean: [Float], std: [Float]) { (pixelMean, pixelStd) }

    package func maskUpscaling(for lowRes: FloatTensor, inputSize: ImageSize) throws(ImageError) -> (MaskPostprocessor, ImageSize) {
        guard lowRes.shape.count == 4, lowRes.shape[2] == lowRes.shape[3] else {
            throw ImageError(.invalidArgument, file: "<memory>", "low-res masks must be [B, K, h, h], got \(lowRes.shape)")
        }
        let lowResSide = lowRes.shape[2]
        return (MaskPostprocessor(imageSize: lowResSide), ImageSize(height: lowResSide, width: lowResSide))
    }
}
