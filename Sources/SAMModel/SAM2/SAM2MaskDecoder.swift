import SAMKernels
import SAMTensor

/// SAM 2's mask decoder (`sam_mask_decoder`, canonical `mask_decoder`): SAM's two-way transformer
/// and heads, with an object-score token before the IoU and mask tokens, the high-resolution maps
/// added while upscaling (`high_res_feats` are conv_s0/conv_s1 outputs, which image mode computes
/// once per image: see `SAM2ImageEncoder`), a sigmoid IoU head, an object-score head, and
/// single-mask output that falls back to the best multimask output when mask 0 is unstable.
///
/// Observers see the transformer as SAM's decoder reports it, then `output_upscaling.0` ... `.4`
/// (called one by one, as upstream does with high-res maps), every MLP's layers and `act` calls,
/// `iou_prediction_head`, `pred_obj_score_head`, then `mask_decoder:masks`,
/// `mask_decoder:iou_predictions` and `mask_decoder:object_score_logits`.
/// ref: sam2/modeling/sam/mask_decoder.py MaskDecoder
package struct SAM2MaskDecoder: PromptMaskDecoder {
    package let path: String
    package let options: SAM2DecoderOptions
    package let transformer: TwoWayTransformer
    /// [1, C], first of the output tokens when the model predicts object scores.
    package let objectScoreToken: NN.Embedding?
    package let iouToken: NN.Embedding
    package let maskTokens: NN.Embedding
    package let outputUpscaling: OutputUpscaling
    package let outputHypernetworksMLPs: [SAM2MLP]
    package let iouPredictionHead: SAM2MLP
    /// `pred_obj_score_head`: an MLP(C, C, 1, 3) or a Linear(C, 1); nil without object scores.
    package let objectScoreMLP: SAM2MLP?
    package let objectScoreLinear: NN.Linear?
    package let sparseTokenRange: ClosedRange<Int>

    package var transformerDim: Int { iouToken.dim }
    package var numMaskTokens: Int { maskTokens.count }
    /// ref: sam2_image_predictor.py _predict — low_res_masks = torch.clamp(low_res_masks, -32.0, 32.0)
    package var lowResolutionClamp: ClosedRange<Float>? { -32...32 }
    /// False when the model predicts object scores but its weights came without the head.
    package var predictsObjectScores: Bool { options.objectScoreHead == .none || objectScoreMLP != nil || objectScoreLinear != nil }

    /// ref: mask_decoder.py MaskDecoder.__init__ (SAM2Base._build_sam_heads' arguments)
    package init(weights: WeightStore, prefix: String, config: SAMConfig) throws(WeightError) {
        let configured = config.maskDecoder
        let options = configured.familyOptions[SAM2DecoderOptions.self] ?? SAM2DecoderOptions()
        path = prefix
        self.options = options
        (iouToken, maskTokens) = try MaskDecoder.tokens(weights: weights, prefix: prefix, config: configured)
        let dim = iouToken.dim, tokenCount = maskTokens.count
        objectScoreToken = options.objectScoreHead == .none ? nil
            : try NN.Embedding(weights: weights, path: "\(prefix).obj_score_token", count: 1, dim: dim)
        transformer = try TwoWayTransformer(weights: weights, path: "\(prefix).transformer", embeddingDim: dim, config: configured,
                                            mlpNaming: .sam2)
        outputUpscaling = try OutputUpscaling(weights: weights, path: "\(prefix).output_upscaling", transformerDim: dim)

        let hypernetworksPath = try MaskDecoder.hypernetworksPath(weights: weights, prefix: prefix, tokenCount: tokenCount)
        outputHypernetworksMLPs = try (0..<tokenCount).map { (index) throws(WeightError) in
            try SAM2MLP(weights: weights, path: "\(hypernetworksPath).\(index)", inputDim: dim, hiddenDim: dim, outputDim: dim / 8,
                        layerCount: 3, activation: .relu)
        }
        let iouHeadPath = "\(prefix).iou_prediction_head"
        iouPredictionHead = try SAM2MLP(weights: weights, path: iouHeadPath, inputDim: dim, hiddenDim: configured.iouHeadHiddenDim,
                                        outputDim: tokenCount, layerCount: configured.iouHeadDepth, activation: .relu,
                                        sigmoidOutput: options.iouSigmoid, layerCountField: "maskDecoder.iouHeadDepth")
        let objectHeadPath = "\(prefix).pred_obj_score_head"
        // Exports that do not return the object score drop its head (the token still shapes every
        // mask): such a decoder loads and predicts masks without object scores.
        let hasHead = weights.keys.contains { $0.hasPrefix(objectHeadPath + ".") }
        switch hasHead ? options.objectScoreHead : .none {
        case .none:
            (objectScoreMLP, objectScoreLinear) = (nil, nil)
        case .linear:
            (objectScoreMLP, objectScoreLinear) = (nil, try NN.Linear(weights: weights, path: objectHeadPath, inFeatures: dim, outFeatures: 1))
        case .mlp:
            objectScoreMLP = try SAM2MLP(weights: weights, path: objectHeadPath, inputDim: dim, hiddenDim: dim, outputDim: 1,
                                         layerCount: 3, activation: .relu)
            objectScoreLinear = nil
        }
        guard config.minPoints >= 0, config.minPoints <= config.maxPoints else {
            throw .invalid(key: prefix, reason: "config point range \(config.minPoints)...\(config.maxPoints) is empty or negative",
                           source: weights.source)
        }
        sparseTokenRange = config.minPoints...(config.maxPoints + 1)
    }

    /// ref: mask_decoder.py MaskDecoder.predict_masks (repeat_image=False, one prompt)
    package func predictMasks(features: ImageFeatures, imagePE: FloatTensor, sparse: FloatTensor, dense: FloatTensor,
                             observer: ModuleObserver?) throws(PromptError) -> MaskPrediction {
        let c = transformerDim, imageEmbeddings = features.embedding
        try checkImageInputs(imageEmbeddings: imageEmbeddings, imagePE: imagePE, dense: dense)
        try checkSparse(sparse)
        let (height, width) = (imageEmbeddings.shape[2], imageEmbeddings.shape[3])
        let highResolution = features.highResolution
        if options.highResolutionFeatures {
            guard highResolution.count == 2 else { throw .highResolutionFeatures(expected: 2, actual: highResolution.count) }
            // ref: predict_masks — feat_s0 [1, C/8, 4h, 4w], feat_s1 [1, C/4, 2h, 2w]
            for (level, (divisor, scale)) in [(8, 4), (4, 2)].enumerated() {
                let expected = [1, c / divisor, scale * height, scale * width]
                guard highResolution[level].shape == expected else {
                    throw .shape(input: "high_res_feats_\(level)", expected: Shape.text(expected), actual: highResolution[level].shape)
                }
            }
        } else if !highResolution.isEmpty {
            throw .highResolutionFeatures(expected: 0, actual: highResolution.count)
        }

        // ref: predict_masks — output_tokens = cat([obj_score_token, iou_token, mask_tokens]); tokens = cat(output_tokens, sparse)
        let leading = objectScoreToken.map { $0.weight.data } ?? []
        let first = objectScoreToken == nil ? 0 : 1
        let tokens = FloatTensor(shape: [1, first + 1 + numMaskTokens + sparse.shape[1], c],
                                 data: leading + iouToken.weight.data + maskTokens.weight.data + sparse.data)
        // ref: predict_masks — src = image_embeddings + dense_prompt_embeddings; hs, src = self.transformer(src, pos_src, tokens)
        // Only the output tokens (first + 1 + numMaskTokens) are read from hs.
        let (hs, imageTokens) = transformer(imageTokens: Kernels.nchwToTokens(imageEmbeddings, plus: dense),
                                            imagePETokens: Kernels.nchwToTokens(imagePE), pointEmbedding: tokens, kept: nil,
                                            outputTokens: first + 1 + numMaskTokens, observer: observer)
        func token(_ index: Int) -> FloatTensor { FloatTensor(shape: [1, c], data: Array(hs.data[(index * c)..<((index + 1) * c)])) }

        // ref: predict_masks — src = src.transpose(1, 2).view(b, c, h, w); the upscaling
        let upscaled = upscale(Kernels.tokensToNCHW(imageTokens, height: height, width: width),
                               highResolution: highResolution, observer: observer)
        // ref: predict_masks — hyper_in = stack([mlp_i(mask_tokens_out[:, i, :])]); masks = hyper_in @ upscaled.view(b, c, h * w)
        var hyperIn: [Float] = []
        for (index, mlp) in outputHypernetworksMLPs.enumerated() { hyperIn += mlp(token(first + 1 + index), observer: observer).data }
        let hypernetwork = FloatTensor(shape: [numMaskTokens, hyperIn.count / numMaskTokens, 1, 1], data: hyperIn)
        let masks = Kernels.conv2d(upscaled, weight: hypernetwork, bias: nil)
        observer?("\(path):masks", masks)

        // ref: predict_masks — iou_pred = self.iou_prediction_head(iou_token_out)
        let iou = iouPredictionHead(token(first), observer: observer)
        observer?("\(path):iou_predictions", iou)
        // ref: predict_masks — object_score_logits = self.pred_obj_score_head(hs[:, 0, :]), else 10.0
        let objectScore: FloatTensor?
        if let objectScoreMLP {
            objectScore = objectScoreMLP(token(0), observer: observer)
        } else if let objectScoreLinear {
            objectScore = objectScoreLinear(token(0), observer: observer)
        } else {
            objectScore = predictsObjectScores ? FloatTensor(shape: [1, 1], data: [10]) : nil
        }
        if let objectScore { observer?("\(path):object_score_logits", objectScore) }
        // ref: MaskDecoder.forward — mask_tokens_out = hs[:, s + 1 : (s + 1 + num_mask_tokens), :]
        let tokenOutputs = FloatTensor(shape: [numMaskTokens, c],
                                       data: Array(hs.data[((first + 1) * c)..<((first + 1 + numMaskTokens) * c)]))
        return MaskPrediction(masks: masks, iou: iou, objectScoreLogits: objectScore, maskTokenOutputs: tokenOutputs)
    }

    /// The upscaled embedding [1, C/8, 4h, 4w]. With high-res maps, the modules run one by one:
    /// act1(ln1(dc1(src) + feat_s1)), then act2(dc2(.) + feat_s0).
    /// ref: mask_decoder.py predict_masks (use_high_res_features)
    func upscale(_ src: FloatTensor, highResolution: [FloatTensor], observer: ModuleObserver?) -> FloatTensor {
        guard highResolution.count == 2 else { return outputUpscaling(src, observer: observer) }
        let path = outputUpscaling.path
        var y = outputUpscaling.convTranspose0(src, observer: observer)
        Kernels.add(&y, highResolution[1])
        outputUpscaling.norm1(&y, observer: observer)
        Kernels.gelu(&y)
        observer?("\(path).2", y)
        y = outputUpscaling.convTranspose3(y, observer: observer)
        Kernels.add(&y, highResolution[0])
        Kernels.gelu(&y)
        observer?("\(path).4", y)
        return y
    }

    /// Mask 0, unless it is unstable: see `SAM2SingleMaskRule`.
    package func singleMaskIndex(_ prediction: MaskPrediction, tokenCount: Int) -> Int {
        SAM2SingleMaskRule(options: options).index(prediction)
    }
}

/// SAM 2's mask decoder as a decoder family.
package enum SAM2MaskDecoderFamily: MaskDecoderFamily {
    package static let name = "sam2"
    package static let promptLayout = PromptLayout.sam2

    package static func makeDecoder(weights: WeightStore, prefix: String, config: SAMConfig) throws(WeightError) -> any PromptMaskDecoder {
        try SAM2MaskDecoder(weights: weights, prefix: prefix, config: config)
    }
}
