import Foundation
import SAMFormats
import SAMTensor

extension CanonicalPath {
    /// A SAM 2 parameter's canonical path (`SAM2Names.parameterPath`); `no_mem_embed` belongs to no component.
    static func sam2(_ path: String) -> CanonicalPath {
        CanonicalPath(component: SAMComponent.of(path) ?? .imageEncoder, path: path, wrapperPrefix: "")
    }
}

extension ONNXWeightMapper {
    /// SAM 2's FPN neck computes a sine position encoding for every level (image mode never reads
    /// it); TorchScript folds its frequencies dim_t = 10000^(2 floor(i/2) / n), i < n, into constants
    /// divided into the positions. Accepted only inside a neck `position_encoding` scope and only if
    /// every value matches the formula.
    /// ref: sam2/modeling/position_encoding.py PositionEmbeddingSine._pe
    mutating func isSinePositionFrequencies(_ stored: ONNXInitializer, uses: [ONNXUse]) throws(ImportError) -> Bool {
        guard stored.shape.count == 1, stored.shape[0] >= 2, !uses.isEmpty, uses.allSatisfy({ use in
            use.node.opType == "Div" && use.input == 1
                && (use.canonicalScope.map { $0.path.hasPrefix("image_encoder.neck.position_encoding") } ?? false)
        }) else { return false }
        let values = try read(stored.name)
        let count = stored.shape[0]
        for i in 0..<count {
            let expected = Double(Float(pow(10_000.0, Double(Float(2 * (i / 2)) / Float(count)))))
            guard abs(values.value(at: i) - expected) <= 1e-6 * expected else { return false }
        }
        return true
    }
}

extension ONNXWeightMapper {
    /// How many mask tokens the graph's decoder has: its hypernetwork MLPs, by node scope or weight name.
    var hypernetworkCount: Int {
        let prefix = "mask_decoder.output_hypernetworks_mlps."
        var indices = Set<Int>()
        func note(_ path: String?) {
            guard let path, path.hasPrefix(prefix), let index = Int(path.dropFirst(prefix.count).prefix { $0 != "." }) else { return }
            indices.insert(index)
        }
        for node in model.graph.nodes.indices { note(CanonicalNames.resolve(index.scope(ofNode: node))?.path) }
        for stored in model.storedTensors { note(CanonicalNames.resolveParameter(stored.name)?.path) }
        return indices.count
    }

    /// SAM 2's concatenated output tokens cat([obj_score_token, iou_token, mask_tokens]): one row
    /// more than the decoder has mask tokens and the IoU token (its hypernetworks count the mask
    /// tokens; exports often drop the object-score head itself, whose output they do not return).
    /// The first row becomes `mask_decoder.obj_score_token.weight`, the rest is SAM's [iou_token,
    /// mask_tokens] (split by the caller). For SAM's decoder, `tokens` as they are.
    /// ref: sam2/modeling/sam/mask_decoder.py MaskDecoder.predict_masks (output_tokens, pred_obj_scores)
    mutating func splitObjectScoreToken(_ tokens: Tensor, stored: ONNXInitializer, derivation: Derivation) throws(ImportError) -> Tensor {
        let shape = tokens.shape, maskTokens = hypernetworkCount
        guard shape.count == 3, shape[0] == 1, maskTokens > 0, shape[1] == maskTokens + 2 else { return tokens }
        let channels = shape[2], rest = shape[1] - 1
        let objectScore = tokens.gathered(shape: [1, channels], count: channels) { $0 }
        try result.insert("mask_decoder.obj_score_token.weight", objectScore, origin: origin(stored, .outputTokensSplit, derivation))
        return tokens.gathered(shape: [1, rest, channels], count: rest * channels) { channels + $0 }
    }
}

extension ONNXWeightMapper {
    /// A decoder that appends the padding point itself (samexporter's SAM 2 decoder:
    /// `torch.zeros((B, 1, 2))` concatenated to the point coordinates) may have the zeros folded
    /// into a [1, 1, 2] constant. Accepted only when every value is 0 and Concat reads it.
    /// ref: samexporter export_sam2.py SAM2ImageDecoder._embed_points; prompt_encoder.py _embed_points (pad)
    mutating func isPaddingPointCoordinates(_ stored: ONNXInitializer, uses: [ONNXUse]) throws(ImportError) -> Bool {
        guard stored.shape == [1, 1, 2], !uses.isEmpty, uses.allSatisfy({ $0.node.opType == "Concat" }) else { return false }
        let values = try read(stored.name)
        return values.value(at: 0) == 0 && values.value(at: 1) == 0
    }
}
