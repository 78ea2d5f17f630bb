import SAMKernels
import SAMTensor

/// transformer.py `TwoWayAttentionBlock` (`mask_decoder.transformer.layers.i`): self attention on the
/// prompt tokens, cross attention tokens → image, an MLP on the tokens, cross attention image → tokens,
/// each followed by a residual add and a LayerNorm (eps 1e-5 unless configured). The first block of the transformer
/// skips the positional encoding (and the residual) in its self attention (`skip_first_layer_pe`).
package struct TwoWayAttentionBlock: Sendable {
    package let path: String
    package let selfAttn: TwoWayTransformer.Attention
    package let norm1: NN.LayerNorm
    package let crossAttnTokenToImage: TwoWayTransformer.Attention
    package let norm2: NN.LayerNorm
    package let mlp: MLPBlock
    package let norm3: NN.LayerNorm
    package let norm4: NN.LayerNorm
    package let crossAttnImageToToken: TwoWayTransformer.Attention
    package let skipFirstLayerPE: Bool

    /// `mlpDim` nil reads the MLP width from `mlp.lin1.weight`.
    /// ref: transformer.py TwoWayAttentionBlock.__init__
    package init(weights: WeightStore, path: String, embeddingDim: Int, numHeads: Int, mlpDim: Int?,
                attentionDownsampleRate: Int, skipFirstLayerPE: Bool, mlpNaming: MLPBlock.Naming = .sam,
                layerNormEps: Float = 1e-5) throws(WeightError) {
        self.path = path
        selfAttn = try .init(weights: weights, path: "\(path).self_attn", embeddingDim: embeddingDim,
                             numHeads: numHeads, downsampleRate: 1)
        norm1 = try NN.LayerNorm(weights: weights, path: "\(path).norm1", dim: embeddingDim, eps: layerNormEps)
        crossAttnTokenToImage = try .init(weights: weights, path: "\(path).cross_attn_token_to_image", embeddingDim: embeddingDim,
                                          numHeads: numHeads, downsampleRate: attentionDownsampleRate)
        norm2 = try NN.LayerNorm(weights: weights, path: "\(path).norm2", dim: embeddingDim, eps: layerNormEps)
        mlp = try MLPBlock(weights: weights, path: "\(path).mlp", embeddingDim: embeddingDim, mlpDim: mlpDim, activation: .relu,
                           naming: mlpNaming)
        norm3 = try NN.LayerNorm(weights: weights, path: "\(path).norm3", dim: embeddingDim, eps: layerNormEps)
        norm4 = try NN.LayerNorm(weights: weights, path: "\(path).norm4", dim: embeddingDim, eps: layerNormEps)
        crossAttnImageToToken = try .init(weights: weights, path: "\(path).cross_attn_image_to_token", embeddingDim: embeddingDim,
                                          numHeads: numHeads, downsampleRate: attentionDownsampleRate)
        self.skipFirstLayerPE = skipFirstLayerPE
    }

    /// queries [1, T, C] (prompt tokens), keys [1, HW, C] (image tokens), with their positional
    /// encodings of the same shapes. Returns the updated pair.
    /// ref: transformer.py TwoWayAttentionBlock.forward
    package func callAsFunction(queries: FloatTensor, keys: FloatTensor, queryPE: FloatTensor, keyPE: FloatTensor,
                               observer: ModuleObserver? = nil) -> (queries: FloatTensor, keys: FloatTensor) {
        let out = self(queries: queries, keys: keys, queryPE: queryPE, keyPE: keyPE, keysWithPE: nil, kept: nil,
                       foldsCrossAttention: true, observer: observer)
        return (out.queries, out.keys)
    }

    /// `keysWithPE`: keys + keyPE when the caller has it (the previous block returns it).
    /// `kept`: this block's projections of `keys` made earlier (`imageProjections`, keys being the
    /// transformer's input image tokens); never with an observer.
    /// `foldsCrossAttention` false keeps the cross attentions' image-side projections (not folded into
    /// the prompt tokens, `TwoWayTransformer.Attention.Folding`): the first block's, which the per-image
    /// state holds, so that a decode with the state and one without it take the same route.
    /// Returns the updated pair and their keys + keyPE, which the next attention to the image takes.
    func callAsFunction(queries: FloatTensor, keys: FloatTensor, queryPE: FloatTensor, keyPE: FloatTensor,
                        keysWithPE: FloatTensor?, kept: ImageProjections?, foldsCrossAttention: Bool,
                        observer: ModuleObserver?) -> (queries: FloatTensor, keys: FloatTensor, keysWithPE: FloatTensor) {
        precondition(kept == nil || !foldsCrossAttention, "kept image projections are for the unfolded route")
        precondition(kept == nil || observer == nil, "kept image projections skip modules an observer would see")
        var queries = queries, keys = keys

        // Self attention block
        if skipFirstLayerPE {
            // ref: forward — queries = self.self_attn(q=queries, k=queries, v=queries)  (no residual)
            queries = selfAttn(q: queries, k: queries, v: queries, observer: observer)
        } else {
            // ref: forward — q = queries + query_pe; attn_out = self.self_attn(q=q, k=q, v=queries); queries = queries + attn_out
            let q = Kernels.sum(queries, queryPE)
            queries = selfAttn(q: q, k: q, v: queries, plusResidual: queries, observer: observer)
        }
        // ref: forward — queries = self.norm1(queries)
        norm1(&queries, observer: observer)

        // Cross attention block, tokens attending to image embedding
        // ref: forward — q = queries + query_pe; k = keys + key_pe
        var q = Kernels.sum(queries, queryPE)
        let k = keysWithPE ?? Kernels.sum(keys, keyPE)
        // ref: forward — attn_out = self.cross_attn_token_to_image(q=q, k=k, v=keys); queries = queries + attn_out
        if let projections = kept {
            queries = crossAttnTokenToImage(q: q, projectedKeys: projections.tokenToImageKeys,
                                            projectedValues: projections.tokenToImageValues, plusResidual: queries)
        } else {
            queries = crossAttnTokenToImage(q: q, k: k, v: keys, plusResidual: queries, folding: foldsCrossAttention, observer: observer)
        }
        norm2(&queries, observer: observer)

        // MLP block
        // ref: forward — mlp_out = self.mlp(queries); queries = queries + mlp_out; queries = self.norm3(queries)
        Kernels.add(&queries, mlp(queries, observer: observer))
        norm3(&queries, observer: observer)

        // Cross attention block, image embedding attending to tokens
        // ref: forward — q = queries + query_pe; k = keys + key_pe (keys are unchanged since the
        // token→image attention, so `k` from above already holds exactly keys + key_pe)
        q = Kernels.sum(queries, queryPE)
        // ref: forward — attn_out = self.cross_attn_image_to_token(q=k, k=q, v=queries); keys = keys + attn_out
        if let projections = kept {
            keys = crossAttnImageToToken(projectedQueries: projections.imageToTokenQueries, k: q, v: queries, plusResidual: keys)
        } else {
            keys = crossAttnImageToToken(q: k, k: q, v: queries, plusResidual: keys, folding: foldsCrossAttention, observer: observer)
        }
        // ref: forward — keys = self.norm4(keys); the next block's (or the final attention's)
        // k = keys + key_pe, made in the norm's pass
        let nextKeysWithPE = norm4(&keys, returningSumWith: keyPE, observer: observer)

        // A forward hook sees the (queries, keys) tuple: report queries under the module's path.
        observer?(path, queries)
        observer?("\(path):keys", keys)
        return (queries, keys, nextKeysWithPE)
    }
}
