import Foundation

/// The `config.json` Hugging Face `transformers` writes beside a `Sam2Model` (`model_type` "sam2") or
/// `Sam2VideoModel` ("sam2_video") checkpoint with `save_pretrained`: transformers' field names, as
/// read. A field a file leaves out is nil here and means transformers' default, the value a model
/// loaded from the file gets (`TransformersSam2Config+SAMConfig` applies them).
/// ref: transformers 5.23 configuration_sam2.py Sam2HieraDetConfig, Sam2VisionConfig,
/// Sam2PromptEncoderConfig, Sam2MaskDecoderConfig, Sam2Config; configuration_sam2_video.py Sam2VideoConfig
public struct TransformersSam2Config: Decodable, Sendable {
    public static let modelTypes: Set<String> = ["sam2", "sam2_video"]

    /// Whether `data` is a transformers config.json (it names a `model_type`), of SAM 2 or not.
    public static func modelType(of data: Data) -> String? {
        struct Probe: Decodable {
            var modelType: String?
            enum CodingKeys: String, CodingKey { case modelType = "model_type" }
        }
        return (try? JSONDecoder().decode(Probe.self, from: data))?.modelType
    }

    public struct Backbone: Decodable, Sendable {
        public var hiddenSize: Int?
        public var numAttentionHeads: Int?
        public var numChannels: Int?
        public var imageSize: SideLengths?
        public var patchKernelSize: SideLengths?
        public var patchStride: SideLengths?
        public var patchPadding: SideLengths?
        public var queryStride: SideLengths?
        public var windowPositionalEmbeddingBackgroundSize: SideLengths?
        public var numQueryPoolStages: Int?
        public var blocksPerStage: [Int]?
        public var embedDimPerStage: [Int]?
        public var numAttentionHeadsPerStage: [Int]?
        public var windowSizePerStage: [Int]?
        public var globalAttentionBlocks: [Int]?
        public var mlpRatio: Double?
        public var hiddenAct: String?
        public var layerNormEps: Double?
    }

    public struct Vision: Decodable, Sendable {
        public var backboneConfig: Backbone?
        public var backboneChannelList: [Int]?
        public var fpnHiddenSize: Int?
        public var fpnKernelSize: Int?
        public var fpnStride: Int?
        public var fpnPadding: Int?
        public var fpnTopDownLevels: [Int]?
        public var numFeatureLevels: Int?
    }

    public struct PromptEncoder: Decodable, Sendable {
        public var hiddenSize: Int?
        public var imageSize: SideLengths?
        public var patchSize: SideLengths?
        public var maskInputChannels: Int?
        public var numPointEmbeddings: Int?
    }

    public struct MaskDecoder: Decodable, Sendable {
        public var hiddenSize: Int?
        public var mlpDim: Int?
        public var numHiddenLayers: Int?
        public var numAttentionHeads: Int?
        public var attentionDownsampleRate: Int?
        public var numMultimaskOutputs: Int?
        public var iouHeadDepth: Int?
        public var iouHeadHiddenDim: Int?
        public var dynamicMultimaskViaStability: Bool?
        public var dynamicMultimaskStabilityDelta: Double?
        public var dynamicMultimaskStabilityThresh: Double?
    }

    public struct RopeParameters: Decodable, Sendable {
        public var ropeTheta: Double?
        public var ropeType: String?
    }

    public var modelType: String
    public var visionConfig: Vision?
    public var promptEncoderConfig: PromptEncoder?
    public var maskDecoderConfig: MaskDecoder?

    // Sam2VideoConfig's own fields (absent from a Sam2Config).
    public var imageSize: SideLengths?
    public var numMaskmem: Int?
    public var sigmoidScaleForMemEnc: Double?
    public var sigmoidBiasForMemEnc: Double?
    public var enableOcclusionSpatialEmbedding: Bool?
    public var multimaskOutputInSam: Bool?
    public var multimaskMinPtNum: Int?
    public var multimaskMaxPtNum: Int?
    public var multimaskOutputForTracking: Bool?
    public var maxObjectPointersInEncoder: Int?
    public var maxCondFrameNum: Int?
    public var enableTemporalPosEncodingForObjectPointers: Bool?
    public var memoryAttentionHiddenSize: Int?
    public var memoryAttentionNumLayers: Int?
    public var memoryAttentionNumAttentionHeads: Int?
    public var memoryAttentionDownsampleRate: Int?
    public var memoryAttentionFeedForwardHiddenSize: Int?
    public var memoryAttentionFeedForwardHiddenAct: String?
    public var memoryAttentionRopeFeatSizes: [Int]?
    /// transformers before `rope_parameters` (still read by its config class).
    public var memoryAttentionRopeTheta: Double?
    public var ropeParameters: RopeParameters?
    public var memoryEncoderHiddenSize: Int?
    public var memoryEncoderOutputChannels: Int?
    public var maskDownsamplerEmbedDim: Int?
    public var maskDownsamplerKernelSize: Int?
    public var maskDownsamplerStride: Int?
    public var maskDownsamplerPadding: Int?
    public var maskDownsamplerTotalStride: Int?
    public var maskDownsamplerHiddenAct: String?
    public var memoryFuserNumLayers: Int?
    public var memoryFuserEmbedDim: Int?
    public var memoryFuserIntermediateDim: Int?
    public var memoryFuserKernelSize: Int?
    public var memoryFuserPadding: Int?
    public var memoryFuserHiddenAct: String?

    /// Whether the file describes `Sam2VideoModel` (its video fields apply).
    public var isVideo: Bool { modelType == "sam2_video" }

    public init(data: Data) throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        self = try decoder.decode(Self.self, from: data)
    }
}

/// A transformers size: one number for a square, or [height, width] (`image_size`, `patch_stride`).
public struct SideLengths: Decodable, Sendable, Equatable {
    public var values: [Int]

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let side = try? container.decode(Int.self) {
            values = [side, side]
        } else {
            values = try container.decode([Int].self)
        }
    }

    /// The side of a square, nil when the two differ or the list is not a pair.
    public var square: Int? { values.count == 2 && values[0] == values[1] ? values[0] : nil }
}
