import SAMImage
import SAMTensor

/// EfficientViT-SAM's predictor: the input as SAM's (`SamPreprocessor`, longest side to the encoder's
/// side, padded), but prompts, the crop and the mask upscaling in a `promptFrame` square, as if the
/// input were that size (1024 for L*, whose encoder takes 512).
/// ref: efficientsam/models/efficientvit/sam.py EfficientViTSamPredictor.set_image (input_size =
/// get_preprocess_shape(h, w, image_size[0])), apply_coords, EfficientViTSam.postprocess_masks
struct EfficientViTInputTransform: InputTransforming, Equatable {
    let preprocessor: SamPreprocessor
    let promptFrame: Int

    var side: Int { preprocessor.imageSize }

    func prepare(_ image: RGBImage) throws(ImageError) -> (input: FloatTensor, inputSize: ImageSize) {
        (try preprocessor.prepare(image).input, inputSize(for: image.size))
    }

    func inputSize(for originalSize: ImageSize) -> ImageSize {
        ResizeLongestSide(targetLength: promptFrame).targetSize(originalSize)
    }

    var pixelStatistics: (mean: [Float], std: [Float]) { preprocessor.pixelStatistics }

    func applyCoords(_ points: [Float], originalSize: ImageSize) throws(ImageError) -> [Float] {
        try ResizeLongestSide(targetLength: promptFrame).applyCoords(points, originalSize: originalSize)
    }

    func maskUpscaling(for lowRes: FloatTensor, inputSize: ImageSize) throws(ImageError) -> (MaskPostprocessor, ImageSize) {
        (MaskPostprocessor(imageSize: promptFrame), inputSize)
    }
}

extension EfficientViTConfig {
    /// SAM's transform when the frames agree (XL*: 1024 both), the two-frame one otherwise (L*).
    package var inputTransform: InputTransform {
        let preprocessor = preprocessing.samPreprocessor(side: imageSize)
        guard promptFrameSize != imageSize else { return InputTransform(preprocessor) }
        return InputTransform(EfficientViTInputTransform(preprocessor: preprocessor, promptFrame: promptFrameSize))
    }
}
