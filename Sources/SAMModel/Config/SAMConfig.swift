/// Architecture hyperparameters that the weights' shapes do not determine (strides, head counts,
/// image size, eps values). Everything a shape does determine (channel widths, depths, MLP widths)
/// is read from the weights at load time and checked against this where both exist.
/// Defaults are MobileSAM's `vit_t` (ref: mobile_sam/build_sam.py build_sam_vit_t).
public struct SAMConfig: Codable, Sendable, Equatable {
    /// The image encoder of whichever family (`ImageEncoderFamilies`).
    public var imageEncoder: AnyImageEncoderConfig
    package var promptEncoder: PromptEncoderConfig
    package var maskDecoder: MaskDecoderConfig
    /// The fewest points a prompt may have (a box counts as two, the padding point not at all): with
    /// `maxPoints`, the range the prompt encoder and decoder accept, as CoreML exports declare RangeDim(1, 100).
    public var minPoints: Int
    /// The most points a prompt may have, a box's two corners included and the padding point not.
    public var maxPoints: Int
    /// The model family (`ModelFamilies`, JSON key `modelFamily`) when it is not the image encoder's
    /// plain one (SAM-HQ over SAM's ViT); nil otherwise, so configurations of the plain families
    /// keep the bytes they had before families were named. `modelFamily` is the name in force.
    package var modelFamilyName: String?
    /// SAM 2's video mode, when the model has it; nil (and absent from the JSON) otherwise.
    package var videoMode: SAM2VideoConfig?

    /// Whether the model has SAM 2's video mode (memory encoder, memory attention, object pointers):
    /// what `samtrack` and `VideoTracker` need.
    public var hasVideoMode: Bool { videoMode != nil }

    /// SAM 2's video mode. Its fields are the package's own; ask `hasVideoMode` instead.
    @available(*, deprecated, message: "use hasVideoMode; the video configuration's fields are internal to the package")
    public var video: SAM2VideoConfig? {
        get { videoMode }
        set { videoMode = newValue }
    }

    private enum CodingKeys: String, CodingKey {
        case imageEncoder, promptEncoder, maskDecoder, minPoints, maxPoints
        case videoMode = "video"
        case modelFamilyName = "modelFamily"
    }

    package init(imageEncoder: AnyImageEncoderConfig = AnyImageEncoderConfig(TinyViTConfig.mobileSAM, family: TinyViTFamily.self),
                promptEncoder: PromptEncoderConfig = .mobileSAM,
                maskDecoder: MaskDecoderConfig = .mobileSAM, minPoints: Int = 1, maxPoints: Int = 100) {
        self.imageEncoder = imageEncoder
        self.promptEncoder = promptEncoder
        self.maskDecoder = maskDecoder
        self.minPoints = minPoints
        self.maxPoints = maxPoints
    }

    /// The model family's name: `modelFamilyName`, else the plain family of the image encoder's.
    public var modelFamily: String {
        get { modelFamilyName ?? ModelFamilies.plain(encoderFamily: imageEncoder.family)?.name ?? imageEncoder.family }
        set { modelFamilyName = newValue == ModelFamilies.plain(encoderFamily: imageEncoder.family)?.name ? nil : newValue }
    }

    /// The model family; nil for a name no family has (validation refuses it).
    package var family: (any ModelFamily.Type)? { ModelFamilies.named(modelFamily) }

    /// What the image encoder hands the decoder, as the model family names it (`ModelFamily.featureNames`).
    public var featureNames: [String] { family?.featureNames(self) ?? imageEncoder.featureNames }
    /// The shape of each of `featureNames`.
    package var featureShapes: [[Int]] { family?.featureShapes(self) ?? imageEncoder.featureShapes }

    package static let mobileSAM = SAMConfig()

    /// The original SAM with the given ViT (prompt encoder and mask decoder as MobileSAM's, which are SAM's).
    package static func sam(_ vit: ViTConfig) -> SAMConfig {
        SAMConfig(imageEncoder: AnyImageEncoderConfig(vit, family: ViTFamily.self))
    }
}

/// TinyViT as MobileSAM builds it.
package struct TinyViTConfig: Codable, Sendable, Equatable {
    package var imageSize: Int
    package var inChannels: Int
    package var embedDims: [Int]
    package var depths: [Int]
    package var numHeads: [Int]
    package var windowSizes: [Int]
    package var mlpRatio: Double
    package var mbconvExpandRatio: Double
    package var localConvSize: Int
    /// Stride of the PatchMerging that starts stage i+1 (upstream: 1 when its out dim is 320, 448 or 576, else 2).
    package var mergeStrides: [Int]
    /// Output channels of the neck (= the prompt/decoder transformer dim).
    package var neckDim: Int
    /// How photos become the input; nil (and absent from JSON) is SAM's (`ImagePreprocessing.sam`).
    package var imagePreprocessing: ImagePreprocessing? = nil

    package static let mobileSAM = TinyViTConfig(
        imageSize: 1024, inChannels: 3, embedDims: [64, 128, 160, 320], depths: [2, 2, 6, 2],
        numHeads: [2, 4, 5, 10], windowSizes: [7, 7, 14, 7], mlpRatio: 4, mbconvExpandRatio: 4,
        localConvSize: 3, mergeStrides: [2, 2, 1], neckDim: 256)

    /// ref: tiny_vit_sam.py PatchMerging.__init__ — stride_c = 1 if out_dim in (320, 448, 576) else 2
    package static func upstreamMergeStrides(embedDims: [Int]) -> [Int] {
        embedDims.dropFirst().map { [320, 448, 576].contains($0) ? 1 : 2 }
    }
}

package struct PromptEncoderConfig: Codable, Sendable, Equatable {
    package var embedDim: Int
    /// Side of the image embedding grid (64 for a 1024 input).
    package var imageEmbeddingSize: Int
    /// Side of the model input (1024).
    package var inputImageSize: Int
    package var maskInChannels: Int

    package static let mobileSAM = PromptEncoderConfig(embedDim: 256, imageEmbeddingSize: 64, inputImageSize: 1024, maskInChannels: 16)
}

package struct MaskDecoderConfig: Sendable, Equatable {
    package var transformerDim: Int
    package var depth: Int
    package var numHeads: Int
    package var mlpDim: Int
    /// Cross attention to the image downsamples its internal dim by this factor.
    package var attentionDownsampleRate: Int
    package var numMultimaskOutputs: Int
    package var iouHeadDepth: Int
    package var iouHeadHiddenDim: Int
    /// What the model family adds to the decoder (`ModelFamily.maskDecoderOptions`: SAM 2's
    /// `SAM2DecoderOptions`), each under its own JSON key; empty for SAM's.
    package var familyOptions = FamilyDecoderOptions()
    /// eps of the transformer's nn.LayerNorms when not PyTorch's 1e-5 (EfficientViT-SAM's zoo sets
    /// 1e-6); nil, and absent from JSON, for SAM's, so other files keep their bytes.
    package var transformerLayerNormEps: Double? = nil

    /// The transformer's LayerNorm eps in force. ref: segment_anything/modeling/transformer.py nn.LayerNorm(embedding_dim)
    package var layerNormEps: Float { Float(transformerLayerNormEps ?? 1e-5) }

    package static let mobileSAM = MaskDecoderConfig(transformerDim: 256, depth: 2, numHeads: 8, mlpDim: 2048,
                                                    attentionDownsampleRate: 2, numMultimaskOutputs: 3,
                                                    iouHeadDepth: 3, iouHeadHiddenDim: 256)
}

