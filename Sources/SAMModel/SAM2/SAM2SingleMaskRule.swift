/// SAM 2's single-mask output: mask 0 unless the model falls back on instability. Mask 0's
/// stability score is the share of its logits above +delta among those above -delta (1 when none
/// is); below the threshold, the multimask output (1...K-1) with the highest IoU prediction (the
/// first of equal ones) is returned instead.
/// ref: sam2/modeling/sam/mask_decoder.py MaskDecoder._dynamic_multimask_via_stability, _get_stability_scores
package struct SAM2SingleMaskRule: Sendable, Equatable {
    package let options: SAM2DecoderOptions

    package init(options: SAM2DecoderOptions) { self.options = options }

    /// The index (into all K masks) single-mask output returns.
    package func index(_ prediction: MaskPrediction) -> Int {
        let iou = prediction.iou.data
        guard options.dynamicMultimaskViaStability, iou.count > 1, prediction.masks.shape.count == 4 else { return 0 }
        // ref: _dynamic_multimask_via_stability — best_scores_inds = torch.argmax(multimask_iou_scores, dim=-1)
        let best = (1..<iou.count).max { iou[$0] < iou[$1] } ?? 1
        let plane = prediction.masks.shape[2] * prediction.masks.shape[3]
        // ref: _get_stability_scores — area_i = sum(logits > delta), area_u = sum(logits > -delta), in float32
        let delta = Float(options.stabilityDelta)
        var intersection = 0, union = 0
        for value in prediction.masks.data[0..<plane] {
            if value > delta { intersection += 1 }
            if value > -delta { union += 1 }
        }
        let stability: Float = union > 0 ? Float(intersection) / Float(union) : 1
        return stability >= Float(options.stabilityThreshold) ? 0 : best
    }
}
