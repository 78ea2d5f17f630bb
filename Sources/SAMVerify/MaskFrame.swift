import SAMFormats
import SAMImage
import SAMImageFiles

/// The sizes a case's low-res masks are brought to, as `Sam.postprocess_masks` does: the original
/// image (H, W) and the resized image inside the encoder's padded square.
public struct MaskFrame: Codable, Sendable, Equatable {
    public var originalSize: ImageSize
    public var inputSize: ImageSize
    /// The encoder's square input side.
    public var imageSize: Int
    /// Where the original size came from: "manifest image_size", "references/resized_image.npy" or
    /// "the encoder's input square".
    public var source: String

    /// Full-size masks may cost at most this many pixels a plane (ImageLimits' default photo budget).
    static let maxPixels = 100_000_000

    /// The frame of `references`: the manifest's `image_size` [H, W] (input size by ResizeLongestSide),
    /// else the resized image's [h, w] (no resize), else the padded square itself.
    static func of(_ references: ReferenceSet, imageSize: Int) -> Result<MaskFrame, CaseRunner.InputProblem> {
        guard imageSize >= 1, imageSize <= ImageIO.maxDimension else {
            return .failure(.init(message: "the model's image size \(imageSize) is outside 1...\(ImageIO.maxDimension)"))
        }
        let resize = ResizeLongestSide(targetLength: imageSize)
        if let dims = references.manifest?["image_size"]?.arrayValue {
            let values = dims.compactMap(\.numberValue)
            guard values.count == 2, values.allSatisfy({ $0 >= 1 && $0 <= Double(ImageIO.maxDimension) && $0.rounded() == $0 }),
                  values[0] * values[1] <= Double(maxPixels) else {
                return .failure(.init(message: "manifest.json image_size must be [H, W], whole numbers of 1...\(ImageIO.maxDimension) "
                                      + "and at most \(maxPixels) pixels"))
            }
            let original = ImageSize(height: Int(values[0]), width: Int(values[1]))
            return .success(MaskFrame(originalSize: original, inputSize: resize.targetSize(original), imageSize: imageSize,
                                      source: "manifest image_size"))
        }
        let resizedFile = references.referencesPrefix + "/resized_image.npy"
        if case .success(let path) = references.resolve(resizedFile), let tensor = try? NPY.read(path),
           tensor.shape.count == 3, tensor.shape[2] == 3, tensor.shape[0] >= 1, tensor.shape[1] >= 1,
           tensor.shape[0] <= imageSize, tensor.shape[1] <= imageSize {
            let size = ImageSize(height: tensor.shape[0], width: tensor.shape[1])
            return .success(MaskFrame(originalSize: size, inputSize: size, imageSize: imageSize, source: resizedFile))
        }
        let square = ImageSize(height: imageSize, width: imageSize)
        return .success(MaskFrame(originalSize: square, inputSize: square, imageSize: imageSize, source: "the encoder's input square"))
    }
}
