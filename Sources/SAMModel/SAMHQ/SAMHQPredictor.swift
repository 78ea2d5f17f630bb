import SAMTensor

/// What SAM-HQ's predictor returns from the decoder's five masks: SAM's mask plus the HQ mask (or the
/// HQ mask alone with `hq_token_only`), one mask per request: mask 0 for single output, the best of
/// SAM's multimask outputs (1...3, by IoU score) for multimask output.
/// ref: segment_anything_hq/modeling/mask_decoder_hq.py MaskDecoderHQ.forward (mask_slice, masks_hq)
extension SAMHQMaskDecoder {
    /// The predictor's switch for the HQ mask alone (`SamPredictor.predict(hq_token_only=True)`).
    package static let hqTokenOnly = "hq_token_only"

    package var predictorFlags: [String: String] {
        [Self.hqTokenOnly: "return the HQ token's mask alone instead of SAM's mask plus it (upstream's hq_token_only)"]
    }

    /// Each of SAM's K masks as the predictor would return it had it picked that token: plus the HQ
    /// mask, or the HQ mask itself with `hq_token_only`. Scores unchanged. Masks that are not the
    /// K + 1 this decoder gives are returned as they are.
    package func predictorMasks(_ prediction: MaskPrediction, options: PredictorOptions) -> MaskPrediction {
        let masks = prediction.masks, count = prediction.iou.count
        guard masks.shape.count == 4, masks.shape[0] == 1, masks.shape[1] == count + 1 else { return prediction }
        let plane = masks.shape[2] * masks.shape[3]
        let hqOnly = options.flags.contains(Self.hqTokenOnly)
        var data = [Float](repeating: 0, count: count * plane)
        masks.data.withUnsafeBufferPointer { all in
            let hq = all.baseAddress! + count * plane
            for index in 0..<count {
                for pixel in 0..<plane {
                    // ref: forward — masks = masks_hq if hq_token_only else masks_sam + masks_hq
                    data[index * plane + pixel] = hqOnly ? hq[pixel] : all[index * plane + pixel] + hq[pixel]
                }
            }
        }
        return MaskPrediction(masks: FloatTensor(shape: [1, count, masks.shape[2], masks.shape[3]], data: data), iou: prediction.iou)
    }

    /// Mask 0 (multimask_output=False).
    package func singleMaskIndex(_ prediction: MaskPrediction, tokenCount: Int) -> Int { 0 }

    /// ref: forward — multimask: iou_pred, max_iou_idx = torch.max(iou_pred[:, 1:K], dim=1) (the first
    /// of equal scores); else mask_slice = slice(0, 1)
    package func predictorSelection(_ prediction: MaskPrediction, multimask: Bool, tokenCount: Int) -> [Int] {
        let scores = prediction.iou.data
        guard multimask, scores.count > 1 else { return [singleMaskIndex(prediction, tokenCount: tokenCount)] }
        var best = 1
        for index in 2..<scores.count where scores[index] > scores[best] { best = index }
        return [best]
    }
}
