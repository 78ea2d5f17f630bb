import Foundation

/// The `config.json` Hugging Face `transformers` writes beside a `Sam2Model` (`model_type` "sam2") or
/// `Sam2VideoModel` ("sam2_video") checkpoint with `save_pretrained`: transformers' field names, as
/// read. A field a file leaves out is nil here and means transformers' default, the value a model
/// loaded from the file gets (`TransformersSam2Config+SAMConfig` applies them).
/// ref: transformers 5.23 configuration_sam2.py Sam2HieraDetConfig, Sam2VisionConfig,
/// Sam2PromptEncoderConfig, Sam2MaskDecoderConfig, Sam2Config; configuration_sam2_video.py Sam2VideoConfig
public struct TransformersSam2Config: Decodable, Sendable {
    package static let modelTypes: Set<String> = ["sam2", "sam2_video"]

    /// Whether `data` is a transformers config.json (it names a `model_type`), of SAM 2 or not.
    package static func modelType(of data: Data) -> String? {
        struct Probe: Decodable {
            var modelType: String?
            enum CodingKeys: String, CodingKey { case modelType = "model_type" }
        }
        return (try? JSONDecoder().decode(Probe.self, from: data))?.modelType
    }

    package struct Backbone: Decodable, Sendable {
        package var hiddenSize: Int?
        package var numAttentionHeads: Int?
        package var numChannels: Int?
        package var imageSize: SideLengths?
        package var patchKernelSize: SideLengths?
        package var patchStride: SideLengths?
        package var patchPadding: SideLengths?
        package var queryStride: SideLengths?
        package var windowPositionalEmbeddingBackgroundSize: SideLengths?
        package var numQueryPoolStages: Int?
        package var blocksPerStage: [Int]?
        package var embedDimPerStage: [Int]?
        package var numAttentionHeadsPerStage: [Int]?
        package var windowSizePerStage: [Int]?
        package var globalAttentionBlocks: [Int]?
        package var mlpRatio: Double?
        package var hiddenAct: String?
        package var layerNormEps: Double?
    }

    package struct Vision: Decodable, Sendable {
        package var backboneConfig: Backbone?
        package var backboneChannelList: [Int]?
        package var fpnHiddenSize: Int?
        package var fpnKernelSize: Int?
        package var fpnStride: Int?
        package var fpnPadding: Int?
        package var fpnTopDownLevels: [Int]?
        package var numFeatureLevels: Int?
    }

    package struct PromptEncoder: Decodable, Sendable {
        package var hiddenSize: Int?
        package var imageSize: SideLengths?
        package var patchSize: SideLengths?
        package var maskInputChannels: Int?
        package var numPointEmbeddings: Int?
    }

    package struct MaskDecoder: Decodable, Sendable {
        package var hiddenSize: Int?
        package var mlpDim: Int?
        package var numHiddenLayers: Int?
        package var numAttentionHeads: Int?
        package var attentionDownsampleRate: Int?
        package var numMultimaskOutputs: Int?
        package var iouHeadDepth: Int?
        package var iouHeadHiddenDim: Int?
        package var dynamicMultimaskViaStability: Bool?
        package var dynamicMultimaskStabilityDelta: Double?
        package var dynamicMultimaskStabilityThresh: Double?
    }

    package struct RopeParameters: Decodable, Sendable {
        package var ropeTheta: Double?
        package var ropeType: String?
    }

    package var modelType: String
    package var visionConfig: Vision?
    package var promptEncoderConfig: PromptEncoder?
    package var maskDecoderConfig: MaskDecoder?

    // Sam2VideoConfig's own fields (absent from a Sam2Config).
    package var imageSize: SideLengths?
    package var numMaskmem: Int?
    package var sigmoidScaleForMemEnc: Double?
    package var sigmoidBiasForMemEnc: Double?
    package var enableOcclusionSpatialEmbedding: Bool?
    package var multimaskOutputInSam: Bool?
    package var multimaskMinPtNum: Int?
    package var multimaskMaxPtNum: Int?
    package var multimaskOutputForTracking: Bool?
    package var maxObjectPointersInEncoder: Int?
    package var maxCondFrameNum: Int?
    package var enableTemporalPosEncodingForObjectPointers: Bool?
    package var memoryAttentionHiddenSize: Int?
    package var memoryAttentionNumLayers: Int?
    package var memoryAttentionNumAttentionHeads: Int?
    package var memoryAttentionDownsampleRate: Int?
    package var memoryAttentionFeedForwardHiddenSize: Int?
    package var memoryAttentionFeedForwardHiddenAct: String?
    package var memoryAttentionRopeFeatSizes: [Int]?
    /// transformers before `rope_parameters` (still read by its config class).
    package var memoryAttentionRopeTheta: Double?
    package var ropeParameters: RopeParameters?
    package var memoryEncoderHiddenSize: Int?
    package var memoryEncoderOutputChannels: Int?
    package var maskDownsamplerEmbedDim: Int?
    package var maskDownsamplerKernelSize: Int?
    package var maskDownsamplerStride: Int?
    package var maskDownsamplerPadding: Int?
    package var maskDownsamplerTotalStride: Int?
    package var maskDownsamplerHiddenAct: String?
    package var memoryFuserNumLayers: Int?
    package var memoryFuserEmbedDim: Int?
    package var memoryFuserIntermediateDim: Int?
    package var memoryFuserKernelSize: Int?
    package var memoryFuserPadding: Int?
    package var memoryFuserHiddenAct: String?

    /// Whether the file describes `Sam2VideoModel` (its video fields apply).
    package var isVideo: Bool { modelType == "sam2_video" }

    package init(data: Data) throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        self = try decoder.decode(Self.self, from: data)
    }
}

/// A transformers size: one number for a square, or [height, width] (`image_size`, `patch_stride`).
package struct SideLengths: Decodable, Sendable, Equatable {
    package var values: [Int]

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let side = try? container.decode(Int.self) {
            values = [side, side]
        } else {
            values = try container.decode([Int].self)
        }
    }

    /// The side of a square, nil when the two differ or the list is not a pair.
    package var square: Int? { values.count == 2 && values[0] == values[1] ? values[0] : nil }
}
