import SAMTensor

/// EfficientViT-SAM's image encoder (L0, L1, L2, XL0, XL1) as an image-encoder family.
package enum EfficientViTFamily: ImageEncoderFamily {
    package static let name = "efficientvit"

    package static func makeEncoder(weights: WeightStore, prefix: String, config: EfficientViTConfig) throws(WeightError) -> any ImageEncoder {
        try EfficientViTImageEncoder(weights: weights, prefix: prefix, config: config)
    }

    package static func inferConfiguration(fromShapes shapes: [String: [Int]], facts: EncoderFacts,
                                          base: EfficientViTConfig?) -> EfficientViTConfig? {
        EfficientViTShapeInference(shapes: shapes).configuration(facts: facts, base: base)
    }
}

extension EfficientViTConfig: ImageEncoderConfiguration {
    package var embeddingDim: Int { neck.outChannels }
    package var embeddingGridSize: Int { neck.upsampleSize }
    /// Prompts and masks are in a frame of their own (1024), not the encoder input's (512 for L*).
    package var promptFrameSize: Int { imagePreprocessing.promptFrameSize }
    /// The released `.pt` keeps every ConvLayer's BatchNorm, which the model folds at load.
    package var runtimeBatchNormEps: Double? { batchNormEps }

    /// SAM's resize to the encoder input and zero padding after normalising, with the 0-1 statistics
    /// in 0-255 units (equal to 5e-7); the pipeline takes prompts and masks to `promptFrameSize`.
    package var preprocessing: ImagePreprocessing {
        get {
            ImagePreprocessing(resize: .longestSide, pixelMean: imagePreprocessing.pixelMean.map { $0 * 255 },
                               pixelStd: imagePreprocessing.pixelStd.map { $0 * 255 })
        }
        set {
            imagePreprocessing.pixelMean = newValue.pixelMean.map { $0 / 255 }
            imagePreprocessing.pixelStd = newValue.pixelStd.map { $0 / 255 }
        }
    }

    package var summary: String {
        "EfficientViT \(imageSize)x\(imageSize), widths \(widths), depths \(depths), blocks \(blockTypes.map(\.rawValue)), "
            + "neck \(neck.headWidth)x\(neck.headDepth) on stages \(neck.inputStages) -> \(neck.outChannels)x\(neck.upsampleSize)"
    }
}
