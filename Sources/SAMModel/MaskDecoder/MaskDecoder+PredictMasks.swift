import SAMKernels
import SAMTensor

extension MaskDecoder {
    /// Predicts all mask tokens' masks and IoU scores.
    ///
    /// - imageEmbeddings: [1, C, g, g] from the image encoder.
    /// - imagePE: [1, C, g, g], `PromptEncoder.denseImagePositionalEncoding()`.
    /// - sparse: [1, N, C] prompt tokens, N in `sparseTokenRange`.
    /// - dense: [1, C, g, g] from `PromptEncoder.denseEmbedding`.
    ///
    /// Returns masks [1, 4, 4g, 4g] (logits) and iou [1, 4], for every mask token (no multimask slicing).
    /// ref: mask_decoder.py MaskDecoder.predict_masks
    package func predictMasks(imageEmbeddings: FloatTensor, imagePE: FloatTensor, sparse: FloatTensor, dense: FloatTensor,
                             observer: ModuleObserver? = nil) throws(PromptError) -> (masks: FloatTensor, iou: FloatTensor) {
        try checkImageInputs(imageEmbeddings: imageEmbeddings, imagePE: imagePE, dense: dense)
        return try predictMasks(imageShape: imageEmbeddings.shape, sparse: sparse, observer: observer) {
            // ref: predict_masks — src = torch.repeat_interleave(image_embeddings, tokens.shape[0], dim=0) (batch 1);
            // src = src + dense_prompt_embeddings (added while transposed to the transformer's token layout)
            // ref: predict_masks — hs, src = self.transformer(src, pos_src, tokens); transformer.py forward —
            // image_embedding.flatten(2).permute(0, 2, 1), the same for image_pe
            transformer(imageTokens: Kernels.nchwToTokens(imageEmbeddings, plus: dense), imagePETokens: Kernels.nchwToTokens(imagePE),
                        pointEmbedding: $0, kept: nil, outputTokens: outputTokenCount, observer: observer)
        }
    }

    /// `predictMasks` on an image whose prompt-independent work was done once (`keptImageWork`): the
    /// same outputs, bit for bit. The kept work is used when `dense` is the no-mask embedding it
    /// was made with and no observer is attached; otherwise this is the plain call.
    package func predictMasks(kept state: MaskDecoderImageState, imagePE: FloatTensor, sparse: FloatTensor,
                             dense: FloatTensor, observer: ModuleObserver? = nil) throws(PromptError) -> (masks: FloatTensor, iou: FloatTensor) {
        guard observer == nil, dense.isBitwiseEqual(to: state.dense) else {
            return try predictMasks(imageEmbeddings: state.imageEmbeddings, imagePE: imagePE, sparse: sparse, dense: dense, observer: observer)
        }
        return try predictMasks(imageShape: state.imageEmbeddings.shape, sparse: sparse, observer: nil) {
            transformer(imageTokens: state.imageTokens, imagePETokens: state.imagePETokens, pointEmbedding: $0,
                        kept: (state.firstBlock, state.keysWithPE), outputTokens: outputTokenCount, observer: nil)
        }
    }

    /// The tokens predict_masks reads from the transformer's output: the IoU token and the mask tokens.
    var outputTokenCount: Int { 1 + numMaskTokens }

    /// predict_masks around `runTransformer` (prompt tokens in; (hs, image tokens) out).
    private func predictMasks(imageShape: [Int], sparse: FloatTensor, observer: ModuleObserver?,
                              runTransformer: (FloatTensor) -> (queries: FloatTensor, keys: FloatTensor))
        throws(PromptError) -> (masks: FloatTensor, iou: FloatTensor) {
        let c = transformerDim
        try checkSparse(sparse)
        let (height, width) = (imageShape[2], imageShape[3])

        // ref: predict_masks — output_tokens = torch.cat([self.iou_token.weight, self.mask_tokens.weight], dim=0);
        // tokens = torch.cat((output_tokens, sparse_prompt_embeddings), dim=1)
        let tokens = FloatTensor(shape: [1, 1 + numMaskTokens + sparse.shape[1], c],
                                 data: iouToken.weight.data + maskTokens.weight.data + sparse.data)

        let (hs, imageTokens) = runTransformer(tokens)
        // ref: predict_masks — iou_token_out = hs[:, 0, :]; mask_tokens_out = hs[:, 1 : (1 + self.num_mask_tokens), :]
        let iouTokenOut = FloatTensor(shape: [1, c], data: Array(hs.data[0..<c]))

        // The masks always come from the fused head (upscaling and product channels-last, on the
        // image tokens as they are), so attaching an observer never changes them. An observer
        // also gets every upscaling module's output, from the modules run one by one in NCHW.
        if let observer {
            // ref: predict_masks — src = src.transpose(1, 2).view(b, c, h, w); upscaled_embedding = self.output_upscaling(src)
            _ = outputUpscaling(Kernels.tokensToNCHW(imageTokens, height: height, width: width), observer: observer)
        }
        // ref: predict_masks — hyper_in_list.append(self.output_hypernetworks_mlps[i](mask_tokens_out[:, i, :]));
        // hyper_in = torch.stack(hyper_in_list, dim=1)
        var hyperIn: [Float] = []
        for (index, mlp) in outputHypernetworksMLPs.enumerated() {
            let token = FloatTensor(shape: [1, c], data: Array(hs.data[((1 + index) * c)..<((2 + index) * c)]))
            hyperIn += mlp(token, observer: observer).data
        }
        // ref: predict_masks — masks = (hyper_in @ upscaled_embedding.view(b, c, h * w)).view(b, -1, h, w)
        let masks = outputUpscaling.masks(imageTokens: imageTokens, height: height, width: width,
                                          hypernetwork: FloatTensor(shape: [numMaskTokens, hyperIn.count / numMaskTokens], data: hyperIn))
        observer?("\(path):masks", masks)

        // ref: predict_masks — iou_pred = self.iou_prediction_head(iou_token_out)
        let iou = iouPredictionHead(iouTokenOut, observer: observer)
        observer?("\(path):iou_predictions", iou)
        return (masks, iou)
    }
}
