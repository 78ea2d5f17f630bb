import SAMKernels
import SAMTensor

/// transformer.py `TwoWayTransformer` (`mask_decoder.transformer`): `depth` two-way attention blocks
/// between the prompt tokens and the flattened image, then a final token → image attention and LayerNorm.
package struct TwoWayTransformer: Sendable {
    package let path: String
    package let layers: [TwoWayAttentionBlock]
    package let finalAttnTokenToImage: Attention
    package let normFinalAttn: NN.LayerNorm

    package var embeddingDim: Int { normFinalAttn.weight.count }
    package var depth: Int { layers.count }

    /// Depth is the number of `layers.N` in the weights and the MLP width is read from
    /// `layers.0.mlp.lin1.weight`; both are checked against `config`, which gives the head count
    /// and the cross-attention downsample rate.
    /// ref: transformer.py TwoWayTransformer.__init__
    package init(weights: WeightStore, path: String, embeddingDim: Int, config: MaskDecoderConfig,
                mlpNaming: MLPBlock.Naming = .sam) throws(WeightError) {
        self.path = path
        let depth = NN.childCount("\(path).layers", in: weights)
        try NN.requireConsistent(depth, config.depth, field: "maskDecoder.depth", key: "\(path).layers", source: weights.source)
        guard depth > 0 else { throw .missing(key: "\(path).layers.0.norm1.weight", source: weights.source) }
        let mlpKey = "\(path).layers.0.mlp.\(mlpNaming.first).weight"
        guard let mlpShape = weights.shape(of: mlpKey) else { throw .missing(key: mlpKey, source: weights.source) }
        let mlpDim = mlpShape.first ?? 0
        try NN.requireConsistent(mlpDim, config.mlpDim, field: "maskDecoder.mlpDim", key: mlpKey, source: weights.source)

        layers = try (0..<depth).map { (index) throws(WeightError) in
            try TwoWayAttentionBlock(weights: weights, path: "\(path).layers.\(index)", embeddingDim: embeddingDim,
                                     numHeads: config.numHeads, mlpDim: mlpDim,
                                     attentionDownsampleRate: config.attentionDownsampleRate,
                                     skipFirstLayerPE: index == 0, mlpNaming: mlpNaming, layerNormEps: config.layerNormEps)
        }
        finalAttnTokenToImage = try Attention(weights: weights, path: "\(path).final_attn_token_to_image",
                                              embeddingDim: embeddingDim, numHeads: config.numHeads,
                                              downsampleRate: config.attentionDownsampleRate)
        normFinalAttn = try NN.LayerNorm(weights: weights, path: "\(path).norm_final_attn", dim: embeddingDim, eps: config.layerNormEps)
    }

    /// Image tokens and their positional encoding [1, h*w, C] (PyTorch's image_embedding and
    /// image_pe after flatten(2).permute(0, 2, 1)), pointEmbedding [1, T, C]. Returns the
    /// processed tokens [1, T, C] and image tokens [1, h*w, C].
    /// ref: transformer.py TwoWayTransformer.forward
    package func callAsFunction(imageTokens: FloatTensor, imagePETokens keyPE: FloatTensor, pointEmbedding: FloatTensor,
                               observer: ModuleObserver? = nil) -> (queries: FloatTensor, keys: FloatTensor) {
        self(imageTokens: imageTokens, imagePETokens: keyPE, pointEmbedding: pointEmbedding, kept: nil, observer: observer)
    }

    /// `kept`: the first block's projections of `imageTokens` made earlier (`MaskDecoderImageState`).
    /// `outputTokens`: how many leading tokens of the returned queries the caller reads (the mask
    /// decoder's output tokens, which precede the prompt tokens), nil for all; see `finalAttention`.
    func callAsFunction(imageTokens: FloatTensor, imagePETokens keyPE: FloatTensor, pointEmbedding: FloatTensor,
                        kept: (projections: TwoWayAttentionBlock.ImageProjections, keysWithPE: FloatTensor)?,
                        outputTokens: Int? = nil, observer: ModuleObserver?) -> (queries: FloatTensor, keys: FloatTensor) {
        var keys = imageTokens
        // keys + image_pe, once known: the kept one, then each block's
        var keysWithPE = kept?.keysWithPE
        // ref: forward — queries = point_embedding
        var queries = pointEmbedding

        // ref: forward — for layer in self.layers: queries, keys = layer(queries, keys, query_pe=point_embedding, key_pe=image_pe)
        for (index, layer) in layers.enumerated() {
            // The first block's image-side projections are kept per image, so it never folds them:
            // with or without the kept state, a decode takes the same route.
            (queries, keys, keysWithPE) = layer(queries: queries, keys: keys, queryPE: pointEmbedding, keyPE: keyPE,
                                                keysWithPE: keysWithPE, kept: index == 0 ? kept?.projections : nil,
                                                foldsCrossAttention: index > 0, observer: observer)
        }

        // ref: forward — k = keys + image_pe (the last block made it)
        let k = keysWithPE ?? Kernels.sum(keys, keyPE)
        let tokens = queries.shape[1], needed = min(outputTokens ?? tokens, tokens)
        guard let observer else {
            return (finalAttention(queries: queries, pointEmbedding: pointEmbedding, k: k, v: keys, rows: needed, observer: nil), keys)
        }
        // The module dumps hold every token, as PyTorch's forward makes them; the returned rows
        // are made as without an observer, so attaching one never changes the outputs.
        let all = finalAttention(queries: queries, pointEmbedding: pointEmbedding, k: k, v: keys, rows: tokens, observer: observer)
        // A forward hook sees the (queries, keys) tuple: report queries under the module's path.
        observer(path, all)
        observer("\(path):keys", keys)
        let returned = needed == tokens ? all
            : finalAttention(queries: queries, pointEmbedding: pointEmbedding, k: k, v: keys, rows: needed, observer: nil)
        return (returned, keys)
    }

    /// The final token -> image attention and norm for the first `rows` tokens only. Each query's
    /// row of an attention depends on that query alone, and the final attention feeds nothing but
    /// the returned tokens, so the mask decoder (which reads its few output tokens) skips the
    /// prompt tokens' rows; with few rows, k_proj and v_proj of the image tokens fold into them
    /// (`Attention.Folding`) instead of projecting all 4096.
    private func finalAttention(queries: FloatTensor, pointEmbedding: FloatTensor, k: FloatTensor, v: FloatTensor,
                                rows: Int, observer: ModuleObserver?) -> FloatTensor {
        let width = queries.shape[2]
        func leading(_ tensor: FloatTensor) -> FloatTensor {
            rows == tensor.shape[1] ? tensor : FloatTensor(shape: [1, rows, width], data: Array(tensor.data.prefix(rows * width)))
        }
        let queries = leading(queries)
        // ref: forward — q = queries + point_embedding;
        // attn_out = self.final_attn_token_to_image(q=q, k=k, v=keys); queries = queries + attn_out
        var out = finalAttnTokenToImage(q: Kernels.sum(queries, leading(pointEmbedding)), k: k, v: v, plusResidual: queries,
                                        observer: observer)
        // ref: forward — queries = self.norm_final_attn(queries)
        normFinalAttn(&out, observer: observer)
        return out
    }
}
