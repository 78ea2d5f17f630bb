/// Every way an importer turns (or refuses to turn) a stored tensor into a canonical one.
/// Each imported, dropped or ignored tensor records the rule that decided it, for the
/// summary and for error messages.
public enum ImportRule: String, CaseIterable, Sendable, CustomStringConvertible {
    // State dicts (HDF5)
    /// The key is the canonical name (possibly after stripping a wrapper prefix).
    case stateDictKey = "state-dict key"
    /// `X.c.weight` + `X.bn.{weight,bias,running_mean,running_var}` -> folded `X.c.weight`, `X.c.bias`.
    case foldBatchNorm = "fold BatchNorm into conv"
    /// `*.num_batches_tracked`: BatchNorm's training step counter, no numeric meaning in eval mode.
    case dropBatchNormCounter = "drop BatchNorm step counter"
    /// `image_encoder.head.*`, `image_encoder.norm_head.*`: TinyViT's classifier, never run by SAM.
    case dropClassifierHead = "drop TinyViT classifier head"
    /// `*.attention_bias_idxs`: index table derived from the window size (upstream keeps it out of the state dict).
    case dropDerivedIndexTable = "drop derived attention-bias index table"
    /// A Hugging Face `transformers` SamModel key renamed to upstream's by `HuggingFaceSamNames`.
    case huggingFaceName = "transformers SamModel name renamed"
    /// A Hugging Face `transformers` Sam2Model key renamed to upstream's by `HuggingFaceSam2Names`
    /// (a row of `prompt_encoder.point_embed.weight` for each point embedding).
    case huggingFaceSam2Name = "transformers Sam2Model name renamed"
    /// A Hugging Face `transformers` Sam2VideoModel video weight (memory attention and encoder, object
    /// pointers, temporal encodings) renamed to upstream SAM2Base's by `HuggingFaceSam2VideoNames`.
    case huggingFaceSam2VideoName = "transformers Sam2VideoModel video weight renamed"
    /// float64 stored tensor narrowed to float32 (the runtime's precision).
    case narrowFloat64 = "narrow float64 to float32"
    /// SAM 2's `sam_prompt_encoder.*` / `sam_mask_decoder.*`: SAM's components under SAM2Base's names.
    case sam2ComponentRenamed = "SAM 2 sam_prompt_encoder/sam_mask_decoder key, renamed"
    /// SAM 2's memory attention and encoder, object pointers, mask downsampler, memory encodings:
    /// only video mode runs them.
    /// SAM 2's video weights from an upstream-named state dict: kept under their names.
    case sam2VideoKept = "SAM 2 video weights (memory attention, memory encoder, object pointers) kept by name"
    case dropVideoOnly = "drop SAM 2 video-only weights (memory attention, memory encoder, object pointers)"

    // ONNX: names
    /// Initializer keeps its PyTorch name (wrapper prefix stripped), layout unchanged.
    case exportedName = "exported name"
    /// Named Linear weight fed straight into MatMul: stored [in,out], canonical [out,in].
    case namedLinearWeightTransposed = "named Linear weight, transposed back"

    // ONNX: consumers (TorchScript node-name scopes, dynamo metadata scopes)
    /// Conv/ConvTranspose input 1 -> `<scope>.weight` (a fused `X.bn` scope means `X.c`).
    case convWeightByScope = "Conv weight from consumer scope"
    /// Conv/ConvTranspose input 2 -> `<weight>.bias` or `<scope>.bias`.
    case convBiasByScope = "Conv bias from consumer scope"
    /// MatMul input 1 (Linear weight stored transposed [in,out]) -> `<scope>.weight` [out,in].
    case linearWeightTransposed = "MatMul weight transposed back to Linear"
    /// Gemm input 1 -> `<scope>.weight` (transposed back when transB = 0), input 2 -> `<scope>.bias`.
    case gemmWeight = "Gemm weight/bias from consumer scope"
    /// 1-D tensor added in a module scope (MatMul + Add = Linear) -> `<scope>.bias`.
    case linearBiasByScope = "Linear bias from consumer scope"
    /// LayerNormalization inputs 1/2 -> `<scope>.weight` / `<scope>.bias`.
    case layerNormAffineByScope = "LayerNorm affine from consumer scope"
    /// [C,1,1] multiplied / added in a LayerNorm2d scope -> `<scope>.weight` / `<scope>.bias` [C].
    case channelAffineReshaped = "LayerNorm2d affine [C,1,1] reshaped to [C]"
    /// [1,C,1,1] multiplied / added in a LayerNorm2d scope that views its affine as (1, -1, 1, 1) -> [C].
    case batchedChannelAffineReshaped = "LayerNorm2d affine [1,C,1,1] reshaped to [C]"
    /// MatMul input 1 in `pe_layer` scope -> `pe_layer.positional_encoding_gaussian_matrix` (no transpose: used as `coords @ G`).
    case gaussianMatrixByScope = "positional Gaussian matrix from consumer scope"
    /// [H,N,N] added to attention logits = `attention_biases[:, attention_bias_idxs]`, inverted to [H, offsets].
    case attentionBiasTableInverted = "TinyViT attention-bias table inverted"
    /// [2s-1, head_dim] gathered by indices the graph computes, for the einsum the structure
    /// names (`ONNXStructuralMatch`) -> `rel_pos_h` / `rel_pos_w` as stored.
    case relativePositionsGatheredByComputedIndices = "ViT relative positions gathered by computed indices"
    /// [1,H,W,C] added to the patch embedding at the ViT encoder's root -> `image_encoder.pos_embed`.
    case positionEmbeddingByScope = "ViT absolute position embedding from consumer scope"
    /// A [1,C] row in a point-embedding scope (`not_a_point_embed`, `point_embeddings.N`) -> `<scope>.weight`.
    case embeddingRowByScope = "point embedding row from consumer scope"
    /// [s, s, head_dim] read by the rel_h / rel_w Einsum in a ViT `attn` scope = get_rel_pos folded, -> `rel_pos_h` / `rel_pos_w`.
    case relativePositionsUngathered = "ViT relative positions un-gathered to [2s-1, head_dim]"
    /// [2s-1, head_dim] gathered at run time (GatherND by the constant q - k + s - 1 table) for the rel_h / rel_w Einsum -> `rel_pos_h` / `rel_pos_w` as stored.
    case relativePositionsGatheredAtRunTime = "ViT relative positions gathered at run time"
    /// A constant [1,C,g,g] dense-embedding graph output, the same at every position -> `prompt_encoder.no_mask_embed.weight` [1,C].
    case noMaskEmbedFromDenseOutput = "no-mask embedding from a constant dense-embedding output"
    /// [1,C,1,1] expanded or multiplied at the prompt encoder's root -> `prompt_encoder.no_mask_embed.weight` [1,C].
    case noMaskEmbedReshaped = "no-mask embedding [1,C,1,1] reshaped to [1,C]"
    /// [1,T,C] = cat(iou_token, mask_tokens) expanded at the mask decoder's root -> split into both.
    case outputTokensSplit = "output tokens split into iou_token and mask_tokens"

    /// [1,H,W,C] added at Hiera's trunk root = `_get_pos_embed` folded by the exporter -> `image_encoder.trunk:pos_embed`.
    case hieraPositionEmbeddingFolded = "Hiera position embedding folded by the exporter"

    /// A quantized Conv's float bias, reshaped and added to the rescaled integer product (quantize_dynamic).
    case quantizedConvBias = "bias added to a quantized Conv's product"

    // Dense positional encoding (a fact, not a weight)
    /// Constant-folded `get_dense_pe()` [1,C,g,g] feeding the transformer's positional input.
    case densePEConstant = "constant-folded dense PE"
    /// Constant-folded `get_dense_pe().flatten(2).permute(0,2,1)` [1,g*g,C] -> [1,C,g,g].
    case densePETokensUnflattened = "constant-folded dense PE tokens [1,g*g,C] to [1,C,g,g]"
    /// `image_points_embeddings.bin`: raw f32 [1,C,g,g].
    case densePEBlob = "dense PE raw blob"

    // Recognised non-weights
    /// [g,g,2] coordinate grid of `PositionEmbeddingRandom.forward`, checked against the formula.
    case peCoordinateGrid = "dense-PE coordinate grid (derived from g, checked)"
    /// SAM 2's neck sine position-encoding frequencies 10000^(2 floor(i/2) / n), checked against the formula.
    case sinePositionFrequencies = "SAM 2 neck sine position-encoding frequencies (derived, checked)"
    /// [1,1,2] zeros concatenated to the point coordinates: the padding point's (0, 0), checked.
    case paddingPointCoordinates = "padding point coordinates (zeros, checked)"
    /// Consumed only as shape/scale arguments (Resize scales, Reshape shapes ...).
    case shapeArithmetic = "shape arithmetic"
    /// A 3-element constant subtracted from (mean) or dividing (std) the image input: in-graph
    /// preprocessing (samexporter's encoder), checked against the model's preprocessing at conversion.
    case inGraphPixelNormalization = "in-graph pixel normalisation (checked against the preprocessing)"
    /// The scale or zero point of a quantized weight (used in dequantizing it).
    case quantizationParameter = "quantization scale or zero point"

    public var description: String { rawValue }
}
