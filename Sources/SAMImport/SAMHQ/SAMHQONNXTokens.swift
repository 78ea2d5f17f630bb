import SAMFormats
import SAMTensor

extension ONNXWeightMapper {
    /// Whether the graph holds SAM-HQ's HQ mask MLP (`mask_decoder.hf_mlp`), by node scope or weight name.
    var hasHQMaskMLP: Bool {
        let prefix = "mask_decoder.hf_mlp."
        return model.graph.nodes.indices.contains { CanonicalNames.resolve(index.scope(ofNode: $0))?.path.hasPrefix(prefix) == true }
            || model.storedTensors.contains { CanonicalNames.resolveParameter($0.name)?.path.hasPrefix(prefix) == true }
    }

    /// SAM-HQ's decoder appends its HQ output token: cat([iou_token, mask_tokens, hf_token]), folded by
    /// the exporter into one [1, 1 + M + 1, C] constant. In a graph with the HQ mask MLP the last row
    /// becomes `mask_decoder.hf_token.weight`; the rest is SAM's [iou_token, mask_tokens] (split by the
    /// caller). Any other decoder's tokens are returned as they are.
    /// ref: segment_anything_hq/modeling/mask_decoder_hq.py MaskDecoderHQ.predict_masks (L168)
    mutating func splitHQToken(_ tokens: Tensor, stored: ONNXInitializer, derivation: Derivation) throws(ImportError) -> Tensor {
        let shape = tokens.shape
        guard shape.count == 3, shape[0] == 1, shape[1] >= 3, hasHQMaskMLP else { return tokens }
        let channels = shape[2], rest = shape[1] - 1
        let hqToken = tokens.gathered(shape: [1, channels], count: channels) { rest * channels + $0 }
        try result.insert("mask_decoder.hf_token.weight", hqToken, origin: origin(stored, .outputTokensSplit, derivation))
        return tokens.gathered(shape: [1, rest, channels], count: rest * channels) { $0 }
    }
}
