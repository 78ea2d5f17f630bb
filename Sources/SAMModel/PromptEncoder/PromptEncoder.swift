import SAMTensor

/// SAM's prompt encoder (state-dict prefix `prompt_encoder`), shared by MobileSAM and SAM ViT-B/L/H.
/// Turns points (and box corners) into sparse tokens [1, N, C] and an optional low-res mask into
/// the dense embedding [1, C, g, g] added to the image embedding; also owns the dense positional
/// encoding of the image grid that the mask decoder needs.
///
/// ref: mobile_sam/modeling/prompt_encoder.py PromptEncoder, and mobile_sam/utils/onnx.py
/// SamOnnxModel._embed_points / _embed_masks (the official ONNX decoder's variants, ported exactly).
///
/// Observers are called, in execution order, with a module path and what a PyTorch forward hook on
/// that module would see (the first element of a tuple), or `path:name` for values no hook sees:
/// - `prompt_encoder.pe_layer:points` — positional encoding of the points [1, N, C] (before labels);
/// - `prompt_encoder:sparse` — the sparse embeddings returned by `embedPoints`;
/// - `prompt_encoder.mask_downscaling.0` ... `.6`, `prompt_encoder.mask_downscaling` — when a mask is given;
/// - `prompt_encoder:dense` — the dense embedding returned by `denseEmbedding`;
/// - `prompt_encoder.pe_layer` — the [C, g, g] grid, from `denseImagePositionalEncoding`.
package struct PromptEncoder: Sendable {
    package let path: String
    /// C, the prompt embedding width (= the decoder's transformer dim).
    package let embedDim: Int
    /// g, the side of the image embedding grid (64 for a 1024 input).
    package let imageEmbeddingSize: Int
    /// The side of the padded model input in pixels (1024); point coordinates live in this space.
    package let inputImageSize: Int
    /// How many points `embedPoints` accepts (`config.minPoints...config.maxPoints`).
    package let pointCountRange: ClosedRange<Int>

    package let peLayer: PositionEmbeddingRandom
    /// Four [1, C] embeddings added by label: 0 background, 1 foreground, 2 box top-left, 3 box bottom-right.
    package let pointEmbeddings: [NN.Embedding]
    /// [1, C], replaces the encoding of label -1 (padding) points.
    package let notAPointEmbed: NN.Embedding
    /// nil when the weights have no mask path (the split PromptEncoder export takes no mask):
    /// such a model runs without mask input and refuses one.
    package let maskDownscaling: MaskDownscaling?
    /// [1, C], broadcast over the grid when there is no mask input.
    package let noMaskEmbed: NN.Embedding

    /// `get_dense_pe()`, [1, C, g, g]: computed from `peLayer` or supplied at load time.
    /// The supplied encoding, or the one computed from `pe_layer` on first use.
    private let densePE: DerivedTensor
    /// The dense embedding without a mask, [1, C, g, g], made on first use and then shared: every
    /// prompt without a mask gets the same storage, so the decoder's per-image state recognises it
    /// without comparing 4 MB per prompt.
    let noMaskDense: DerivedTensor
    /// True when the dense positional encoding was supplied (e.g. `image_points_embeddings.bin`)
    /// rather than computed from the Gaussian matrix.
    package let densePositionalEncodingIsSupplied: Bool

    /// SAM has one point embedding per label 0...3 (background, foreground, two box corners).
    static let pointEmbeddingCount = 4

    /// Loads `prefix.*` from `weights`. C and mask_in_chans are read from the weights and checked
    /// against `config.promptEncoder`; the grid and input sizes and the point range come from `config`.
    /// Pass `densePositionalEncoding` ([1, C, g, g]) to use a precomputed `get_dense_pe()` instead
    /// of computing it from `positional_encoding_gaussian_matrix`.
    /// ref: prompt_encoder.py PromptEncoder.__init__
    package init(weights: WeightStore, prefix: String = "prompt_encoder", config: SAMConfig = .mobileSAM,
                densePositionalEncoding suppliedPE: FloatTensor? = nil) throws(WeightError) {
        let configured = config.promptEncoder
        path = prefix
        let notAPoint = try NN.Embedding(weights: weights, path: "\(prefix).not_a_point_embed", count: 1, dim: nil)
        let dim = notAPoint.dim
        notAPointEmbed = notAPoint
        embedDim = dim
        try NN.requireConsistent(dim, configured.embedDim, field: "promptEncoder.embedDim",
                                 key: "\(prefix).not_a_point_embed.weight", source: weights.source)
        peLayer = try PositionEmbeddingRandom(weights: weights, path: "\(prefix).pe_layer", embedDim: embedDim)

        let pointEmbeddingsPath = "\(prefix).point_embeddings"
        let found = NN.childCount(pointEmbeddingsPath, in: weights)
        guard found == Self.pointEmbeddingCount else {
            throw .invalid(key: pointEmbeddingsPath, reason: "the weights hold \(found) point embeddings, SAM has \(Self.pointEmbeddingCount) (labels 0...3)",
                           source: weights.source)
        }
        pointEmbeddings = try (0..<Self.pointEmbeddingCount).map { (index) throws(WeightError) in
            try NN.Embedding(weights: weights, path: "\(pointEmbeddingsPath).\(index)", count: 1, dim: dim)
        }

        let maskInKey = "\(prefix).mask_downscaling.3.weight"
        if let maskInShape = weights.shape(of: maskInKey) {
            let maskInChannels = maskInShape.first ?? 0
            try NN.requireConsistent(maskInChannels, configured.maskInChannels, field: "promptEncoder.maskInChannels",
                                     key: maskInKey, source: weights.source)
            maskDownscaling = try MaskDownscaling(weights: weights, path: "\(prefix).mask_downscaling",
                                                  maskInChannels: maskInChannels, embedDim: embedDim)
        } else if weights.keys.contains(where: { $0.hasPrefix("\(prefix).mask_downscaling.") }) {
            throw .missing(key: maskInKey, source: weights.source)
        } else {
            maskDownscaling = nil
        }
        noMaskEmbed = try NN.Embedding(weights: weights, path: "\(prefix).no_mask_embed", count: 1, dim: embedDim)

        imageEmbeddingSize = configured.imageEmbeddingSize
        inputImageSize = configured.inputImageSize
        guard config.minPoints >= 0, config.minPoints <= config.maxPoints else {
            throw .invalid(key: prefix, reason: "config point range \(config.minPoints)...\(config.maxPoints) is empty or negative",
                           source: weights.source)
        }
        pointCountRange = config.minPoints...config.maxPoints

        let grid = imageEmbeddingSize
        // ref: PromptEncoder.forward — self.no_mask_embed.weight.reshape(1, -1, 1, 1).expand(bs, -1, h, w)
        let noMask = noMaskEmbed.weight.data
        noMaskDense = DerivedTensor {
            FloatTensor(shape: [1, noMask.count, grid, grid], data: noMask.flatMap { repeatElement($0, count: grid * grid) })
        }
        if let suppliedPE {
            guard suppliedPE.shape == [1, embedDim, grid, grid] else {
                throw .shapeMismatch(key: "\(prefix).get_dense_pe()", expected: [1, embedDim, grid, grid],
                                     actual: suppliedPE.shape, source: "supplied dense positional encoding")
            }
            densePE = DerivedTensor(value: suppliedPE)
            densePositionalEncodingIsSupplied = true
        } else {
            // ref: prompt_encoder.py PromptEncoder.get_dense_pe — self.pe_layer(self.image_embedding_size).unsqueeze(0)
            densePE = DerivedTensor { [peLayer] in peLayer.denseGrid(height: grid, width: grid) }
            densePositionalEncodingIsSupplied = false
        }
    }

    /// `get_dense_pe()`: the positional encoding of every image-embedding cell, [1, C, g, g],
    /// fed to the mask decoder as `imagePE`.
    /// Reports `prompt_encoder.pe_layer` with the [C, g, g] grid, as a forward hook on `pe_layer` would.
    /// ref: prompt_encoder.py PromptEncoder.get_dense_pe
    package func denseImagePositionalEncoding(observer: ModuleObserver? = nil) -> FloatTensor {
        let encoding = densePE.value
        observer?(peLayer.path, encoding.reshaped(Array(encoding.shape.dropFirst())))
        return encoding
    }
}
