import SAMTensor

/// SAM's and MobileSAM's `SamPredictor`: the longest side resized to the input side, padded;
/// prompts scaled by the same factor; masks upscaled to the padded square, cropped, then resized.
/// ref: segment_anything/predictor.py SamPredictor.set_image, predict; modeling/sam.py postprocess_masks
extension SamPreprocessor: InputTransforming {
    package var side: Int { imageSize }

    package func inputSize(for originalSize: ImageSize) -> ImageSize {
        ResizeLongestSide(targetLength: imageSize).targetSize(originalSize)
    }

    package var pixelStatistics: (mean: [Float], std: [Float]) { (pixelMean, pixelStd) }

    package func applyCoords(_ points: [Float], originalSize: ImageSize) throws(ImageError) -> [Float] {
        try ResizeLongestSide(targetLength: imageSize).applyCoords(points, originalSize: originalSize)
    }

    package func maskUpscaling(for lowRes: FloatTensor, inputSize: ImageSize) throws(ImageError) -> (MaskPostprocessor, ImageSize) {
        (MaskPostprocessor(imageSize: imageSize), inputSize)
    }
}
