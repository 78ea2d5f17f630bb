import SAMTensor

/// One family's predictor geometry: how a photo becomes the model input, prompts move to the
/// frame the prompt encoder expects, and low-res mask logits go back to the photo. SAM's
/// `SamPreprocessor` and SAM 2's `SquarePreprocessor` are two; a family with a predictor of its own
/// adds a type in its folder and returns it from its encoder configuration's `inputTransform`.
package protocol InputTransforming: Sendable {
    /// The square input's side.
    var side: Int { get }
    /// [1, 3, side, side] and the resized image's size inside it (upstream's `input_size`).
    func prepare(_ image: RGBImage) throws(ImageError) -> (input: FloatTensor, inputSize: ImageSize)
    /// The resized image's size inside the square input, for an image of `originalSize`.
    func inputSize(for originalSize: ImageSize) -> ImageSize
    /// Per-channel mean and std the input is normalised with, in the family's pixel scale.
    var pixelStatistics: (mean: [Float], std: [Float]) { get }
    /// x, y pairs in original-image pixels -> the prompt encoder's frame.
    func applyCoords(_ points: [Float], originalSize: ImageSize) throws(ImageError) -> [Float]
    /// The upscaler for `lowRes` [B, K, h, w] and the `inputSize` it crops to before resizing to the photo.
    func maskUpscaling(for lowRes: FloatTensor, inputSize: ImageSize) throws(ImageError) -> (MaskPostprocessor, ImageSize)
    /// Whether `other` is the same transform (the same type with equal values).
    func isEqual(to other: any InputTransforming) -> Bool
}

extension InputTransforming where Self: Equatable {
    package func isEqual(to other: any InputTransforming) -> Bool {
        (other as? Self) == self
    }
}
