import SAMTensor

/// SAM's mask decoder (MobileSAM's and SAM ViT-B/L/H's) as a decoder family.
package enum SAMMaskDecoderFamily: MaskDecoderFamily {
    package static let name = "sam"
    package static let promptLayout = PromptLayout.sam

    package static func makeDecoder(weights: WeightStore, prefix: String, config: SAMConfig) throws(WeightError) -> any PromptMaskDecoder {
        try MaskDecoder(weights: weights, prefix: prefix, config: config)
    }
}

extension MaskDecoder: PromptMaskDecoder {
    package var lowResolutionClamp: ClosedRange<Float>? { nil }
    package var predictsObjectScores: Bool { false }

    /// `predictMasks(imageEmbeddings:…)` on the features' embedding; SAM's decoder takes no
    /// high-resolution maps.
    package func predictMasks(features: ImageFeatures, imagePE: FloatTensor, sparse: FloatTensor, dense: FloatTensor,
                             observer: ModuleObserver?) throws(PromptError) -> MaskPrediction {
        guard features.highResolution.isEmpty else {
            throw .highResolutionFeatures(expected: 0, actual: features.highResolution.count)
        }
        let (masks, iou) = try predictMasks(imageEmbeddings: features.embedding, imagePE: imagePE, sparse: sparse, dense: dense,
                                            observer: observer)
        return MaskPrediction(masks: masks, iou: iou)
    }

    /// The official ONNX export's single mask: mask 0's score gets (tokens - 2.5) * 1000 added, so
    /// one point (two tokens with padding) picks among 1...3 and more tokens favour mask 0.
    /// ref: segment_anything/utils/onnx.py SamOnnxModel.select_masks
    package func singleMaskIndex(_ prediction: MaskPrediction, tokenCount: Int) -> Int {
        Self.officialSingleMaskIndex(iou: prediction.iou.data, tokenCount: tokenCount)
    }

    /// ref: onnx.py select_masks — score_reweight = [1000] + [0] * (num_mask_tokens - 1);
    /// score = iou_preds + (num_points - 2.5) * score_reweight; best_idx = argmax(score)
    package static func officialSingleMaskIndex(iou: [Float], tokenCount: Int) -> Int {
        let scores = iou.enumerated().map { $0.offset == 0 ? $0.element + (Float(tokenCount) - 2.5) * 1000 : $0.element }
        return scores.indices.max { scores[$0] < scores[$1] } ?? 0
    }
}
