import SAMKernels
import SAMTensor

/// The mask decoder's work that depends on the image alone, done once per image and reused by every
/// prompt (apps call predict many times per image): the image tokens with the no-mask dense
/// embedding added, their positional encoding, and the first two-way block's three projections of
/// them (token→image keys and values, image→token queries). Later blocks see image tokens the
/// prompt has already changed, so only the first block's work can be kept.
///
/// A decode with this state gives the same bits as one without it: the kept tensors are made by the
/// same kernels from the same inputs. It is used only when the prompt's dense embedding is the
/// no-mask one (bit for bit) and no observer asks for module outputs; otherwise everything is
/// computed from `imageEmbeddings` as usual.
package struct MaskDecoderImageState: Sendable {
    /// [1, C, g, g], as the image encoder returned them.
    package let imageEmbeddings: FloatTensor
    /// The no-mask dense embedding the kept work assumed.
    let dense: FloatTensor
    /// image_embedding + dense, flattened to tokens [1, g*g, C] (predict_masks' `src`).
    let imageTokens: FloatTensor
    /// The image positional encoding as tokens [1, g*g, C] (`pos_src`).
    let imagePETokens: FloatTensor
    /// imageTokens + imagePETokens: the first block's `k = keys + key_pe`.
    let keysWithPE: FloatTensor
    let firstBlock: TwoWayAttentionBlock.ImageProjections
}

extension MaskDecoder {
    /// The per-image state for `imageEmbeddings` [1, C, g, g], with `imagePE` and the no-mask
    /// `dense` embedding (both [1, C, g, g], from the prompt encoder).
    package func keptImageWork(imageEmbeddings: FloatTensor, imagePE: FloatTensor,
                              noMaskDense dense: FloatTensor) throws(PromptError) -> MaskDecoderImageState {
        try checkImageInputs(imageEmbeddings: imageEmbeddings, imagePE: imagePE, dense: dense)
        // ref: predict_masks — src = image_embeddings + dense_prompt_embeddings; pos_src = image_pe;
        // TwoWayTransformer.forward flattens both to tokens.
        let imageTokens = Kernels.nchwToTokens(imageEmbeddings, plus: dense)
        let imagePETokens = Kernels.nchwToTokens(imagePE)
        // ref: TwoWayAttentionBlock.forward — k = keys + key_pe (the first block's keys are `src`)
        let keysWithPE = Kernels.sum(imageTokens, imagePETokens)
        let firstBlock = transformer.layers[0].imageProjections(keys: imageTokens, keysWithPE: keysWithPE)
        return MaskDecoderImageState(imageEmbeddings: imageEmbeddings, dense: dense, imageTokens: imageTokens,
                                     imagePETokens: imagePETokens, keysWithPE: keysWithPE, firstBlock: firstBlock)
    }

    /// `PromptMaskDecoder.imageState`: SAM's decoder keeps `MaskDecoderImageState`.
    package func imageState(features: ImageFeatures, imagePE: FloatTensor,
                           noMaskDense dense: FloatTensor) throws(PromptError) -> DecoderImageState {
        guard features.highResolution.isEmpty else {
            throw .highResolutionFeatures(expected: 0, actual: features.highResolution.count)
        }
        let kept = try keptImageWork(imageEmbeddings: features.embedding, imagePE: imagePE, noMaskDense: dense)
        return DecoderImageState(features: features, kept: kept)
    }

    /// `PromptMaskDecoder.predictMasks(imageState:…)` with SAM's kept work.
    package func predictMasks(imageState: DecoderImageState, imagePE: FloatTensor, sparse: FloatTensor, dense: FloatTensor,
                             observer: ModuleObserver?) throws(PromptError) -> MaskPrediction {
        guard let kept = imageState.kept as? MaskDecoderImageState else {
            return try predictMasks(features: imageState.features, imagePE: imagePE, sparse: sparse, dense: dense, observer: observer)
        }
        let (masks, iou) = try predictMasks(kept: kept, imagePE: imagePE, sparse: sparse, dense: dense, observer: observer)
        return MaskPrediction(masks: masks, iou: iou)
    }
}

extension TwoWayAttentionBlock {
    /// The block's projections of the image tokens before any prompt has touched them.
    package struct ImageProjections: Sendable {
        /// cross_attn_token_to_image.k_proj(keys + key_pe)
        let tokenToImageKeys: TwoWayTransformer.Attention.ProjectedKeys
        /// cross_attn_token_to_image.v_proj(keys)
        let tokenToImageValues: FloatTensor
        /// cross_attn_image_to_token.q_proj(keys + key_pe)
        let imageToTokenQueries: FloatTensor
    }

    /// The projections `callAsFunction` makes of `keys` when they are the transformer's input.
    func imageProjections(keys: FloatTensor, keysWithPE: FloatTensor) -> ImageProjections {
        ImageProjections(tokenToImageKeys: crossAttnTokenToImage.projectedKeys(keysWithPE),
                         tokenToImageValues: crossAttnTokenToImage.vProj(keys),
                         imageToTokenQueries: crossAttnImageToToken.qProj(keysWithPE))
    }
}
