/// What SAM 2's mask decoder adds to SAM's (sam2/modeling/sam/mask_decoder.py MaskDecoder.__init__
/// arguments as SAM2Base and build_sam2 pass them); defaults are every published SAM 2 / 2.1 model's.
package struct SAM2DecoderOptions: MaskDecoderOptions {
    /// Beside SAM's settings in `maskDecoder` (JSON, `.samw` metadata).
    package static let key = "sam2"

    package enum ObjectScoreHead: String, Codable, Sendable {
        /// pred_obj_scores=False: no object-score token (the logit is a constant 10).
        case none
        /// pred_obj_scores=True: Linear(d, 1).
        case linear
        /// pred_obj_scores_mlp=True: MLP(d, d, 1, 3).
        case mlp
    }

    /// use_high_res_features: conv_s0/conv_s1 maps added while upscaling.
    package var highResolutionFeatures: Bool
    /// iou_prediction_use_sigmoid.
    package var iouSigmoid: Bool
    package var objectScoreHead: ObjectScoreHead
    /// Single-mask output falls back to the best multimask output when mask 0 is unstable
    /// (build_sam2's post-processing overrides: delta 0.05, threshold 0.98).
    package var dynamicMultimaskViaStability: Bool
    package var stabilityDelta: Double
    package var stabilityThreshold: Double

    package init(highResolutionFeatures: Bool = true, iouSigmoid: Bool = true, objectScoreHead: ObjectScoreHead = .mlp,
                dynamicMultimaskViaStability: Bool = true, stabilityDelta: Double = 0.05, stabilityThreshold: Double = 0.98) {
        self.highResolutionFeatures = highResolutionFeatures
        self.iouSigmoid = iouSigmoid
        self.objectScoreHead = objectScoreHead
        self.dynamicMultimaskViaStability = dynamicMultimaskViaStability
        self.stabilityDelta = stabilityDelta
        self.stabilityThreshold = stabilityThreshold
    }

    /// The options, and whether the weights had the object-score head.
    package func summary(weightNames: [String]) -> String {
        let head = objectScoreHead == .none ? "none"
            : weightNames.contains { $0.hasPrefix("mask_decoder.pred_obj_score_head.") } ? objectScoreHead.rawValue
            : "not in the weights (the export dropped it): no object scores"
        return "SAM 2: object-score head \(head), high-res features \(highResolutionFeatures ? "on" : "off"), "
            + "single mask via stability \(dynamicMultimaskViaStability ? "on" : "off")"
    }
}
