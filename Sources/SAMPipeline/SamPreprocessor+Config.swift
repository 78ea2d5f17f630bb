import SAMImage
import SAMModel

extension SamPreprocessor {
    /// The preprocessor a model's configuration asks for: its pixel statistics, its input side.
    public init(_ preprocessing: ImagePreprocessing, imageSize: Int) {
        self.init(pixelMean: preprocessing.pixelMean.map { Float($0) }, pixelStd: preprocessing.pixelStd.map { Float($0) },
                  imageSize: imageSize)
    }
}
