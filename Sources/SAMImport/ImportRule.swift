/// A way an importer turns (or refuses to turn) a stored tensor into a canonical one. Each imported,
/// dropped or ignored tensor records the rule that decided it, for the summary and for error
/// messages. Rules are values, not a closed list: a family's importer declares its own beside its
/// name rules (`extension ImportRule { static let ... }`), and two rules are the same when their
/// descriptions are.
public struct ImportRule: Hashable, Sendable, CustomStringConvertible {
    /// What the rule does, as the summary prints it.
    public let description: String

    package init(_ description: String) {
        self.description = description
    }
}

extension ImportRule {
    // State dicts (HDF5)
    /// The key is the canonical name (possibly after stripping a wrapper prefix).
    public static let stateDictKey = ImportRule("state-dict key")
    /// `X.c.weight` + `X.bn.{weight,bias,running_mean,running_var}` -> folded `X.c.weight`, `X.c.bias`.
    public static let foldBatchNorm = ImportRule("fold BatchNorm into conv")
    /// `*.num_batches_tracked`: BatchNorm's training step counter, no numeric meaning in eval mode.
    public static let dropBatchNormCounter = ImportRule("drop BatchNorm step counter")
    /// `image_encoder.head.*`, `image_encoder.norm_head.*`: TinyViT's classifier, never run by SAM.
    public static let dropClassifierHead = ImportRule("drop TinyViT classifier head")
    /// `*.attention_bias_idxs`: index table derived from the window size (upstream keeps it out of the state dict).
    public static let dropDerivedIndexTable = ImportRule("drop derived attention-bias index table")
    /// A Hugging Face `transformers` SamModel key renamed to upstream's by `HuggingFaceSamNames`.
    public static let huggingFaceName = ImportRule("transformers SamModel name renamed")
    /// A Hugging Face `transformers` Sam2Model key renamed to upstream's by `HuggingFaceSam2Names`
    /// (a row of `prompt_encoder.point_embed.weight` for each point embedding).
    public static let huggingFaceSam2Name = ImportRule("transformers Sam2Model name renamed")
    /// A Hugging Face `transformers` Sam2VideoModel video weight (memory attention and encoder, object
    /// pointers, temporal encodings) renamed to upstream SAM2Base's by `HuggingFaceSam2VideoNames`.
    public static let huggingFaceSam2VideoName = ImportRule("transformers Sam2VideoModel video weight renamed")
    /// float64 stored tensor narrowed to float32 (the runtime's precision).
    public static let narrowFloat64 = ImportRule("narrow float64 to float32")
    /// SAM 2's `sam_prompt_encoder.*` / `sam_mask_decoder.*`: SAM's components under SAM2Base's names.
    public static let sam2ComponentRenamed = ImportRule("SAM 2 sam_prompt_encoder/sam_mask_decoder key, renamed")
    /// SAM 2's video weights from an upstream-named state dict: kept under their names.
    public static let sam2VideoKept = ImportRule("SAM 2 video weights (memory attention, memory encoder, object pointers) kept by name")
    /// SAM 2's memory attention and encoder, object pointers, mask downsampler, memory encodings:
    /// only video mode runs them.
    public static let dropVideoOnly = ImportRule("drop SAM 2 video-only weights (memory attention, memory encoder, object pointers)")

    // ONNX: names
    /// Initializer keeps its PyTorch name (wrapper prefix stripped), layout unchanged.
    public static let exportedName = ImportRule("exported name")
    /// Named Linear weight fed straight into MatMul: stored [in,out], canonical [out,in].
    public static let namedLinearWeightTransposed = ImportRule("named Linear weight, transposed back")

    // ONNX: consumers (TorchScript node-name scopes, dynamo metadata scopes)
    /// Conv/ConvTranspose input 1 -> `<scope>.weight` (a fused `X.bn` scope means `X.c`).
    public static let convWeightByScope = ImportRule("Conv weight from consumer scope")
    /// Conv/ConvTranspose input 2 -> `<weight>.bias` or `<scope>.bias`.
    public static let convBiasByScope = ImportRule("Conv bias from consumer scope")
    /// MatMul input 1 (Linear weight stored transposed [in,out]) -> `<scope>.weight` [out,in].
    public static let linearWeightTransposed = ImportRule("MatMul weight transposed back to Linear")
    /// Gemm input 1 -> `<scope>.weight` (transposed back when transB = 0), input 2 -> `<scope>.bias`.
    public static let gemmWeight = ImportRule("Gemm weight/bias from consumer scope")
    /// 1-D tensor added in a module scope (MatMul + Add = Linear) -> `<scope>.bias`.
    public static let linearBiasByScope = ImportRule("Linear bias from consumer scope")
    /// LayerNormalization inputs 1/2 -> `<scope>.weight` / `<scope>.bias`.
    public static let layerNormAffineByScope = ImportRule("LayerNorm affine from consumer scope")
    /// [C,1,1] multiplied / added in a LayerNorm2d scope -> `<scope>.weight` / `<scope>.bias` [C].
    public static let channelAffineReshaped = ImportRule("LayerNorm2d affine [C,1,1] reshaped to [C]")
    /// [1,C,1,1] multiplied / added in a LayerNorm2d scope that views its affine as (1, -1, 1, 1) -> [C].
    public static let batchedChannelAffineReshaped = ImportRule("LayerNorm2d affine [1,C,1,1] reshaped to [C]")
    /// MatMul input 1 in `pe_layer` scope -> `pe_layer.positional_encoding_gaussian_matrix` (no transpose: used as `coords @ G`).
    public static let gaussianMatrixByScope = ImportRule("positional Gaussian matrix from consumer scope")
    /// [H,N,N] added to attention logits = `attention_biases[:, attention_bias_idxs]`, inverted to [H, offsets].
    public static let attentionBiasTableInverted = ImportRule("TinyViT attention-bias table inverted")
    /// [2s-1, head_dim] gathered by indices the graph computes, for the einsum the structure
    /// names (`ONNXStructuralMatch`) -> `rel_pos_h` / `rel_pos_w` as stored.
    public static let relativePositionsGatheredByComputedIndices = ImportRule("ViT relative positions gathered by computed indices")
    /// [1,H,W,C] added to the patch embedding at the ViT encoder's root -> `image_encoder.pos_embed`.
    public static let positionEmbeddingByScope = ImportRule("ViT absolute position embedding from consumer scope")
    /// A [1,C] row in a point-embedding scope (`not_a_point_embed`, `point_embeddings.N`) -> `<scope>.weight`.
    public static let embeddingRowByScope = ImportRule("point embedding row from consumer scope")
    /// [s, s, head_dim] read by the rel_h / rel_w Einsum in a ViT `attn` scope = get_rel_pos folded, -> `rel_pos_h` / `rel_pos_w`.
    public static let relativePositionsUngathered = ImportRule("ViT relative positions un-gathered to [2s-1, head_dim]")
    /// [2s-1, head_dim] gathered at run time (GatherND by the constant q - k + s - 1 table) for the rel_h / rel_w Einsum -> `rel_pos_h` / `rel_pos_w` as stored.
    public static let relativePositionsGatheredAtRunTime = ImportRule("ViT relative positions gathered at run time")
    /// A constant [1,C,g,g] dense-embedding graph output, the same at every position -> `prompt_encoder.no_mask_embed.weight` [1,C].
    public static let noMaskEmbedFromDenseOutput = ImportRule("no-mask embedding from a constant dense-embedding output")
    /// [1,C,1,1] expanded or multiplied at the prompt encoder's root -> `prompt_encoder.no_mask_embed.weight` [1,C].
    public static let noMaskEmbedReshaped = ImportRule("no-mask embedding [1,C,1,1] reshaped to [1,C]")
    /// [1,T,C] = cat(iou_token, mask_tokens) expanded at the mask decoder's root -> split into both.
    public static let outputTokensSplit = ImportRule("output tokens split into iou_token and mask_tokens")

    /// [1,H,W,C] added at Hiera's trunk root = `_get_pos_embed` folded by the exporter -> `image_encoder.trunk:pos_embed`.
    public static let hieraPositionEmbeddingFolded = ImportRule("Hiera position embedding folded by the exporter")

    /// A quantized Conv's float bias, reshaped and added to the rescaled integer product (quantize_dynamic).
    public static let quantizedConvBias = ImportRule("bias added to a quantized Conv's product")

    // Dense positional encoding (a fact, not a weight)
    /// Constant-folded `get_dense_pe()` [1,C,g,g] feeding the transformer's positional input.
    public static let densePEConstant = ImportRule("constant-folded dense PE")
    /// Constant-folded `get_dense_pe().flatten(2).permute(0,2,1)` [1,g*g,C] -> [1,C,g,g].
    public static let densePETokensUnflattened = ImportRule("constant-folded dense PE tokens [1,g*g,C] to [1,C,g,g]")
    /// `image_points_embeddings.bin`: raw f32 [1,C,g,g].
    public static let densePEBlob = ImportRule("dense PE raw blob")

    // Recognised non-weights
    /// [g,g,2] coordinate grid of `PositionEmbeddingRandom.forward`, checked against the formula.
    public static let peCoordinateGrid = ImportRule("dense-PE coordinate grid (derived from g, checked)")
    /// SAM 2's neck sine position-encoding frequencies 10000^(2 floor(i/2) / n), checked against the formula.
    public static let sinePositionFrequencies = ImportRule("SAM 2 neck sine position-encoding frequencies (derived, checked)")
    /// [1,1,2] zeros concatenated to the point coordinates: the padding point's (0, 0), checked.
    public static let paddingPointCoordinates = ImportRule("padding point coordinates (zeros, checked)")
    /// Consumed only as shape/scale arguments (Resize scales, Reshape shapes ...).
    public static let shapeArithmetic = ImportRule("shape arithmetic")
    /// A 3-element constant subtracted from (mean) or dividing (std) the image input: in-graph
    /// preprocessing (samexporter's encoder), checked against the model's preprocessing at conversion.
    public static let inGraphPixelNormalization = ImportRule("in-graph pixel normalisation (checked against the preprocessing)")
    /// The scale or zero point of a quantized weight (used in dequantizing it).
    public static let quantizationParameter = ImportRule("quantization scale or zero point")
}
