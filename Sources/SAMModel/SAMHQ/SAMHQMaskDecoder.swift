import SAMKernels
import SAMTensor

/// SAM-HQ's mask decoder (`MaskDecoderHQ`): SAM's decoder with a fifth output token (`hf_token`)
/// whose mask is read from a high-quality feature map, the upscaled embedding refined
/// (`embedding_maskfeature`) plus HQ features made once per image from the image embedding
/// (`embedding_encoder`) and the encoder's early features (`compress_vit_feat`).
/// `predictMasks` returns all five masks [1, 5, 4g, 4g] (SAM's four, then the HQ mask) and SAM's four
/// IoU scores [1, 4]; how the predictor combines them is `predictorMasks` (SAMHQPredictor.swift).
///
/// Observers see the transformer as SAM's decoder reports it, `output_upscaling.*`,
/// `embedding_maskfeature.*`, every hypernetwork MLP, `hf_mlp`, `iou_prediction_head`, then
/// `mask_decoder:masks` and `mask_decoder:iou_predictions`; the HQ features' modules
/// (`embedding_encoder.*`, `compress_vit_feat.*`) come first, when computed for the call.
/// ref: segment_anything_hq/modeling/mask_decoder_hq.py MaskDecoderHQ
package struct SAMHQMaskDecoder: PromptMaskDecoder {
    /// The modules SAM-HQ adds to SAM's decoder (what tells its weights from SAM's).
    static let ownModules = ["hf_token", "hf_mlp", "compress_vit_feat", "embedding_encoder", "embedding_maskfeature"]

    package let path: String
    package let transformer: TwoWayTransformer
    package let iouToken: NN.Embedding
    /// SAM's mask tokens [4, C].
    package let maskTokens: NN.Embedding
    /// [1, C], after the mask tokens.
    package let hqToken: NN.Embedding
    package let outputUpscaling: OutputUpscaling
    package let outputHypernetworksMLPs: [MaskDecoder.MLP]
    /// The HQ token's hypernetwork: C → C → C/8.
    package let hqMLP: MaskDecoder.MLP
    package let iouPredictionHead: MaskDecoder.MLP
    let compressViTFeatures: HQFusionStack
    let embeddingEncoder: HQFusionStack
    let embeddingMaskFeature: HQFusionStack
    package let sparseTokenRange: ClosedRange<Int>

    package var transformerDim: Int { iouToken.dim }
    /// SAM's mask tokens (the HQ token is not one of the K the scores cover).
    package var numMaskTokens: Int { maskTokens.count }
    /// Channels of the early features `compress_vit_feat` takes (the ViT width; 160 for TinyViT).
    package var earlyFeatureChannels: Int { compressViTFeatures.inChannels }
    package var lowResolutionClamp: ClosedRange<Float>? { nil }
    package var predictsObjectScores: Bool { false }

    /// ref: mask_decoder_hq.py MaskDecoderHQ.__init__
    package init(weights: WeightStore, prefix: String, config: SAMConfig) throws(WeightError) {
        let configured = config.maskDecoder
        path = prefix
        (iouToken, maskTokens) = try MaskDecoder.tokens(weights: weights, prefix: prefix, config: configured)
        let dim = iouToken.dim, tokenCount = maskTokens.count
        hqToken = try NN.Embedding(weights: weights, path: "\(prefix).hf_token", count: 1, dim: dim)
        transformer = try TwoWayTransformer(weights: weights, path: "\(prefix).transformer", embeddingDim: dim, config: configured)
        outputUpscaling = try OutputUpscaling(weights: weights, path: "\(prefix).output_upscaling", transformerDim: dim)
        let hypernetworksPath = try MaskDecoder.hypernetworksPath(weights: weights, prefix: prefix, tokenCount: tokenCount)
        outputHypernetworksMLPs = try (0..<tokenCount).map { (index) throws(WeightError) in
            try MaskDecoder.MLP(weights: weights, path: "\(hypernetworksPath).\(index)", inputDim: dim, hiddenDim: dim,
                                outputDim: dim / 8, layerCount: MaskDecoder.hypernetworkDepth)
        }
        hqMLP = try MaskDecoder.MLP(weights: weights, path: "\(prefix).hf_mlp", inputDim: dim, hiddenDim: dim, outputDim: dim / 8,
                                    layerCount: MaskDecoder.hypernetworkDepth)
        iouPredictionHead = try MaskDecoder.iouPredictionHead(weights: weights, prefix: prefix, dim: dim, tokenCount: tokenCount,
                                                              config: configured)
        // ref: __init__ — compress_vit_feat (vit_dim -> C -> C/8), embedding_encoder (C -> C/4 -> C/8),
        // embedding_maskfeature (C/8 -> C/4 -> C/8)
        compressViTFeatures = try .upsampling(weights: weights, path: "\(prefix).compress_vit_feat", inChannels: nil,
                                              middle: dim, out: dim / 8)
        embeddingEncoder = try .upsampling(weights: weights, path: "\(prefix).embedding_encoder", inChannels: dim,
                                           middle: dim / 4, out: dim / 8)
        embeddingMaskFeature = try .convolution(weights: weights, path: "\(prefix).embedding_maskfeature", channels: dim / 8,
                                                middle: dim / 4)
        guard config.minPoints >= 0, config.minPoints <= config.maxPoints else {
            throw .invalid(key: prefix, reason: "config point range \(config.minPoints)...\(config.maxPoints) is empty or negative",
                           source: weights.source)
        }
        sparseTokenRange = config.minPoints...(config.maxPoints + 1)
    }

    /// The HQ features [1, C/8, 4g, 4g] of an image: made once per image, whatever the prompt.
    /// ref: MaskDecoderHQ.forward — hq_features = self.embedding_encoder(image_embeddings) + self.compress_vit_feat(vit_features)
    func hqFeatures(_ features: ImageFeatures, observer: ModuleObserver?) throws(PromptError) -> FloatTensor {
        let embedding = features.embedding
        guard features.highResolution.count == 1 else {
            throw .highResolutionFeatures(expected: 1, actual: features.highResolution.count)
        }
        let early = features.highResolution[0]
        let shape = embedding.shape
        try checkEmbedding(embedding)
        let expected = [1, earlyFeatureChannels, shape[2], shape[3]]
        guard early.shape == expected else {
            throw .shape(input: HQImageEncoder.earlyFeatureName, expected: Shape.text(expected), actual: early.shape)
        }
        var hq = embeddingEncoder(embedding, observer: observer)
        Kernels.add(&hq, compressViTFeatures(early, observer: observer))
        return hq
    }

    package func predictMasks(features: ImageFeatures, imagePE: FloatTensor, sparse: FloatTensor, dense: FloatTensor,
                             observer: ModuleObserver?) throws(PromptError) -> MaskPrediction {
        try predictMasks(embedding: features.embedding, hqFeatures: try hqFeatures(features, observer: observer),
                         imagePE: imagePE, sparse: sparse, dense: dense, observer: observer)
    }

    /// The HQ features are the per-image work kept.
    package func imageState(features: ImageFeatures, imagePE: FloatTensor, noMaskDense dense: FloatTensor) throws(PromptError)
        -> DecoderImageState {
        DecoderImageState(features: features, kept: try hqFeatures(features, observer: nil))
    }

    package func predictMasks(imageState: DecoderImageState, imagePE: FloatTensor, sparse: FloatTensor, dense: FloatTensor,
                             observer: ModuleObserver?) throws(PromptError) -> MaskPrediction {
        guard observer == nil, let hq = imageState.kept as? FloatTensor else {
            return try predictMasks(features: imageState.features, imagePE: imagePE, sparse: sparse, dense: dense, observer: observer)
        }
        return try predictMasks(embedding: imageState.features.embedding, hqFeatures: hq, imagePE: imagePE, sparse: sparse,
                                dense: dense, observer: nil)
    }

    /// ref: mask_decoder_hq.py MaskDecoderHQ.predict_masks (one prompt)
    func predictMasks(embedding: FloatTensor, hqFeatures: FloatTensor, imagePE: FloatTensor, sparse: FloatTensor,
                      dense: FloatTensor, observer: ModuleObserver?) throws(PromptError) -> MaskPrediction {
        let c = transformerDim
        try checkImageInputs(imageEmbeddings: embedding, imagePE: imagePE, dense: dense)
        try checkSparse(sparse)
        let (height, width) = (embedding.shape[2], embedding.shape[3])
        // ref: predict_masks — output_tokens = cat([iou_token, mask_tokens, hf_token]); tokens = cat((output_tokens, sparse), dim=1)
        let tokens = FloatTensor(shape: [1, 2 + numMaskTokens + sparse.shape[1], c],
                                 data: iouToken.weight.data + maskTokens.weight.data + hqToken.weight.data + sparse.data)
        // ref: predict_masks — src = image_embeddings + dense_prompt_embeddings; hs, src = self.transformer(src, pos_src, tokens)
        let (hs, imageTokens) = transformer(imageTokens: Kernels.nchwToTokens(embedding, plus: dense),
                                            imagePETokens: Kernels.nchwToTokens(imagePE), pointEmbedding: tokens, kept: nil,
                                            outputTokens: 2 + numMaskTokens, observer: observer)
        func token(_ index: Int) -> FloatTensor { FloatTensor(shape: [1, c], data: Array(hs.data[(index * c)..<((index + 1) * c)])) }

        // ref: predict_masks — upscaled_embedding_sam = self.output_upscaling(src);
        // upscaled_embedding_hq = self.embedding_maskfeature(upscaled_embedding_sam) + hq_features
        let upscaled = outputUpscaling(Kernels.tokensToNCHW(imageTokens, height: height, width: width), observer: observer)
        var upscaledHQ = embeddingMaskFeature(upscaled, observer: observer)
        guard upscaledHQ.shape == hqFeatures.shape else {
            throw .shape(input: "HQ features", expected: Shape.text(upscaledHQ.shape), actual: hqFeatures.shape)
        }
        Kernels.add(&upscaledHQ, hqFeatures)

        // ref: predict_masks — hyper_in: output_hypernetworks_mlps[i] for SAM's tokens, hf_mlp for the HQ token;
        // masks_sam = hyper_in[:, :K] @ upscaled_embedding_sam; masks_sam_hq = hyper_in[:, K:] @ upscaled_embedding_hq
        var hyperIn: [Float] = []
        for (index, mlp) in outputHypernetworksMLPs.enumerated() { hyperIn += mlp(token(1 + index), observer: observer).data }
        let hqHyper = hqMLP(token(1 + numMaskTokens), observer: observer)
        let planes = upscaled.shape[1]
        let masksSAM = Kernels.conv2d(upscaled, weight: FloatTensor(shape: [numMaskTokens, planes, 1, 1], data: hyperIn), bias: nil)
        let maskHQ = Kernels.conv2d(upscaledHQ, weight: FloatTensor(shape: [1, planes, 1, 1], data: hqHyper.data), bias: nil)
        // ref: predict_masks — masks = torch.cat([masks_sam, masks_sam_hq], dim=1)
        let masks = FloatTensor(shape: [1, numMaskTokens + 1, masksSAM.shape[2], masksSAM.shape[3]], data: masksSAM.data + maskHQ.data)
        observer?("\(path):masks", masks)
        // ref: predict_masks — iou_pred = self.iou_prediction_head(iou_token_out)
        let iou = iouPredictionHead(token(0), observer: observer)
        observer?("\(path):iou_predictions", iou)
        return MaskPrediction(masks: masks, iou: iou)
    }
}
