import SAMTensor

/// SAM's mask decoder (state-dict prefix `mask_decoder`), shared by MobileSAM and SAM ViT-B/L/H.
/// Given the image embedding, its positional encoding and the prompt embeddings, predicts all
/// `numMaskTokens` (4) low-res mask logits [1, 4, 4g, 4g] and their IoU scores [1, 4]. Choosing the
/// single mask (index 0) or the three multimask outputs (1...3) is left to callers.
///
/// Observers are called, in execution order, with every module's output under its state-dict path,
/// as a PyTorch forward hook would see it (`mask_decoder.transformer.layers.0.self_attn.q_proj`, ...,
/// `mask_decoder.transformer.layers.0.norm4`, `mask_decoder.transformer.layers.0`); modules returning
/// (queries, keys) report queries under their path and keys as `path:keys`. Then come
/// `mask_decoder.output_upscaling.*`, `mask_decoder.output_hypernetworks_mlps.i.*`,
/// `mask_decoder.iou_prediction_head.*`, and finally `mask_decoder:masks` and `mask_decoder:iou_predictions`
/// (`path:name` marks values no forward hook sees).
/// ref: mobile_sam/modeling/mask_decoder.py MaskDecoder
package struct MaskDecoder: Sendable {
    package let path: String
    package let transformer: TwoWayTransformer
    /// [1, C]
    package let iouToken: NN.Embedding
    /// [numMaskTokens, C]
    package let maskTokens: NN.Embedding
    package let outputUpscaling: OutputUpscaling
    /// One per mask token: C → C → C/8 (3 layers).
    package let outputHypernetworksMLPs: [MLP]
    /// C → iouHeadHiddenDim → numMaskTokens.
    package let iouPredictionHead: MLP
    /// The sparse token counts `predictMasks` accepts: `config.minPoints...config.maxPoints + 1`
    /// (one more than the prompt encoder, for the not-a-point padding token).
    package let sparseTokenRange: ClosedRange<Int>

    /// C, the transformer width.
    package var transformerDim: Int { iouToken.dim }
    /// 1 + num_multimask_outputs (4).
    package var numMaskTokens: Int { maskTokens.count }

    /// The hypernetwork MLPs' depth, fixed in upstream code (`MLP(dim, dim, dim // 8, 3)`).
    static let hypernetworkDepth = 3

    /// The IoU token (C from its width) and the mask tokens, checked against `config`: read first by
    /// SAM's and SAM 2's decoders alike. ref: mask_decoder.py MaskDecoder.__init__
    static func tokens(weights: WeightStore, prefix: String, config: MaskDecoderConfig) throws(WeightError)
        -> (iou: NN.Embedding, masks: NN.Embedding) {
        let iou = try NN.Embedding(weights: weights, path: "\(prefix).iou_token", count: 1, dim: nil)
        try NN.requireConsistent(iou.dim, config.transformerDim, field: "maskDecoder.transformerDim",
                                 key: "\(prefix).iou_token.weight", source: weights.source)
        let masks = try NN.Embedding(weights: weights, path: "\(prefix).mask_tokens", count: nil, dim: iou.dim)
        try NN.requireConsistent(masks.count - 1, config.numMultimaskOutputs, field: "maskDecoder.numMultimaskOutputs",
                                 key: "\(prefix).mask_tokens.weight", source: weights.source)
        return (iou, masks)
    }

    /// `prefix.output_hypernetworks_mlps`, once the weights are seen to hold one MLP per mask token.
    static func hypernetworksPath(weights: WeightStore, prefix: String, tokenCount: Int) throws(WeightError) -> String {
        let path = "\(prefix).output_hypernetworks_mlps"
        let count = NN.childCount(path, in: weights)
        guard count == tokenCount else {
            throw .invalid(key: path, reason: "the weights hold \(count) hypernetwork MLPs for \(tokenCount) mask tokens",
                           source: weights.source)
        }
        return path
    }

    /// `prefix.iou_prediction_head`: C → hidden (from its first layer, checked against `config`) → one
    /// score per mask token. ref: mask_decoder.py MaskDecoder.__init__ (iou_prediction_head)
    static func iouPredictionHead(weights: WeightStore, prefix: String, dim: Int, tokenCount: Int,
                                  config: MaskDecoderConfig) throws(WeightError) -> MLP {
        let iouHeadPath = "\(prefix).iou_prediction_head"
        let iouHiddenKey = "\(iouHeadPath).layers.0.weight"
        guard let iouHiddenShape = weights.shape(of: iouHiddenKey) else { throw .missing(key: iouHiddenKey, source: weights.source) }
        let iouHidden = iouHiddenShape.first ?? 0
        try NN.requireConsistent(iouHidden, config.iouHeadHiddenDim, field: "maskDecoder.iouHeadHiddenDim",
                                 key: iouHiddenKey, source: weights.source)
        return try MLP(weights: weights, path: iouHeadPath, inputDim: dim, hiddenDim: iouHidden, outputDim: tokenCount,
                       layerCount: config.iouHeadDepth, layerCountField: "maskDecoder.iouHeadDepth")
    }

    /// Loads `prefix.*` from `weights`. C comes from `iou_token`, the mask-token count from
    /// `mask_tokens`, the transformer depth and MLP width and the IoU head's depth and width from
    /// their weights; all are checked against `config.maskDecoder`, which also gives the head count
    /// and attention downsample rate.
    /// ref: mask_decoder.py MaskDecoder.__init__
    package init(weights: WeightStore, prefix: String = "mask_decoder", config: SAMConfig = .mobileSAM) throws(WeightError) {
        let configured = config.maskDecoder
        path = prefix
        (iouToken, maskTokens) = try Self.tokens(weights: weights, prefix: prefix, config: configured)
        let dim = iouToken.dim, tokenCount = maskTokens.count

        transformer = try TwoWayTransformer(weights: weights, path: "\(prefix).transformer", embeddingDim: dim, config: configured)
        outputUpscaling = try OutputUpscaling(weights: weights, path: "\(prefix).output_upscaling", transformerDim: dim)

        let hypernetworksPath = try Self.hypernetworksPath(weights: weights, prefix: prefix, tokenCount: tokenCount)
        outputHypernetworksMLPs = try (0..<tokenCount).map { (index) throws(WeightError) in
            try MLP(weights: weights, path: "\(hypernetworksPath).\(index)", inputDim: dim, hiddenDim: dim,
                    outputDim: dim / 8, layerCount: Self.hypernetworkDepth)
        }
        iouPredictionHead = try Self.iouPredictionHead(weights: weights, prefix: prefix, dim: dim, tokenCount: tokenCount,
                                                       config: configured)

        guard config.minPoints >= 0, config.minPoints <= config.maxPoints else {
            throw .invalid(key: prefix, reason: "config point range \(config.minPoints)...\(config.maxPoints) is empty or negative",
                           source: weights.source)
        }
        sparseTokenRange = config.minPoints...(config.maxPoints + 1)
    }
}
