/// Architecture hyperparameters that the weights' shapes do not determine (strides, head counts,
/// image size, eps values). Everything a shape does determine (channel widths, depths, MLP widths)
/// is read from the weights at load time and checked against this where both exist.
/// Defaults are MobileSAM's `vit_t` (ref: mobile_sam/build_sam.py build_sam_vit_t).
public struct SAMConfig: Codable, Sendable, Equatable {
    /// The image encoder of whichever family (`ImageEncoderFamilies`).
    public var imageEncoder: AnyImageEncoderConfig
    public var promptEncoder: PromptEncoderConfig
    public var maskDecoder: MaskDecoderConfig
    /// The point counts the prompt encoder and decoder accept (a range, as CoreML exports declare RangeDim(1, 100)).
    public var minPoints: Int
    public var maxPoints: Int

    public init(imageEncoder: AnyImageEncoderConfig = AnyImageEncoderConfig(TinyViTConfig.mobileSAM, family: TinyViTFamily.self),
                promptEncoder: PromptEncoderConfig = .mobileSAM,
                maskDecoder: MaskDecoderConfig = .mobileSAM, minPoints: Int = 1, maxPoints: Int = 100) {
        self.imageEncoder = imageEncoder
        self.promptEncoder = promptEncoder
        self.maskDecoder = maskDecoder
        self.minPoints = minPoints
        self.maxPoints = maxPoints
    }

    public static let mobileSAM = SAMConfig()

    /// The original SAM with the given ViT (prompt encoder and mask decoder as MobileSAM's, which are SAM's).
    public static func sam(_ vit: ViTConfig) -> SAMConfig {
        SAMConfig(imageEncoder: AnyImageEncoderConfig(vit, family: ViTFamily.self))
    }
}

/// TinyViT as MobileSAM builds it.
public struct TinyViTConfig: Codable, Sendable, Equatable {
    public var imageSize: Int
    public var inChannels: Int
    public var embedDims: [Int]
    public var depths: [Int]
    public var numHeads: [Int]
    public var windowSizes: [Int]
    public var mlpRatio: Double
    public var mbconvExpandRatio: Double
    public var localConvSize: Int
    /// Stride of the PatchMerging that starts stage i+1 (upstream: 1 when its out dim is 320, 448 or 576, else 2).
    public var mergeStrides: [Int]
    /// Output channels of the neck (= the prompt/decoder transformer dim).
    public var neckDim: Int
    /// How photos become the input; nil (and absent from JSON) is SAM's (`ImagePreprocessing.sam`).
    public var imagePreprocessing: ImagePreprocessing? = nil

    public static let mobileSAM = TinyViTConfig(
        imageSize: 1024, inChannels: 3, embedDims: [64, 128, 160, 320], depths: [2, 2, 6, 2],
        numHeads: [2, 4, 5, 10], windowSizes: [7, 7, 14, 7], mlpRatio: 4, mbconvExpandRatio: 4,
        localConvSize: 3, mergeStrides: [2, 2, 1], neckDim: 256)

    /// ref: tiny_vit_sam.py PatchMerging.__init__ — stride_c = 1 if out_dim in (320, 448, 576) else 2
    public static func upstreamMergeStrides(embedDims: [Int]) -> [Int] {
        embedDims.dropFirst().map { [320, 448, 576].contains($0) ? 1 : 2 }
    }
}

public struct PromptEncoderConfig: Codable, Sendable, Equatable {
    public var embedDim: Int
    /// Side of the image embedding grid (64 for a 1024 input).
    public var imageEmbeddingSize: Int
    /// Side of the model input (1024).
    public var inputImageSize: Int
    public var maskInChannels: Int

    public static let mobileSAM = PromptEncoderConfig(embedDim: 256, imageEmbeddingSize: 64, inputImageSize: 1024, maskInChannels: 16)
}

public struct MaskDecoderConfig: Codable, Sendable, Equatable {
    public var transformerDim: Int
    public var depth: Int
    public var numHeads: Int
    public var mlpDim: Int
    /// Cross attention to the image downsamples its internal dim by this factor.
    public var attentionDownsampleRate: Int
    public var numMultimaskOutputs: Int
    public var iouHeadDepth: Int
    public var iouHeadHiddenDim: Int

    public static let mobileSAM = MaskDecoderConfig(transformerDim: 256, depth: 2, numHeads: 8, mlpDim: 2048,
                                                    attentionDownsampleRate: 2, numMultimaskOutputs: 3,
                                                    iouHeadDepth: 3, iouHeadHiddenDim: 256)
}
