/// What SAM 2's video mode needs beyond image mode: the sizes of the memory modules (read from the
/// weights) and the tracking switches SAM2Base and SAM2VideoPredictor take from their hydra config
/// (no weight holds them). Defaults are what `build_sam2_video_predictor` builds for the published
/// SAM 2.1 configs; the 2.0/2.1 differences that show in the weights (`obj_ptr_tpos_proj`,
/// `no_obj_embed_spatial`, an MLP or a Linear `obj_ptr_proj`) are read from them (`inferred`).
/// ref: sam2/modeling/sam2_base.py SAM2Base.__init__; sam2/build_sam.py build_sam2_video_predictor;
/// sam2/configs/sam2.1/sam2.1_hiera_t.yaml, sam2/configs/sam2/sam2_hiera_t.yaml
public struct SAM2VideoConfig: Codable, Sendable, Equatable {
    /// Memories attended to: the conditioning frames' plus the last `numMaskmem - 1` frames'.
    package var numMaskmem = 7
    /// Width of a memory (the memory encoder's output channels, `mem_dim`).
    package var memoryDim = 64
    /// ref: sigmoid_scale_for_mem_enc, sigmoid_bias_for_mem_enc
    package var memorySigmoidScale: Float = 20
    package var memorySigmoidBias: Float = -10
    /// Masks from clicks enter the memory binarised (build_sam2_video_predictor's override).
    package var binarizeMaskFromPoints = true
    /// A mask prompt is the output as given (scaled to ±10 logits), not run through the decoder.
    package var useMaskInputAsOutput = true
    /// -1: every conditioning frame is attended to.
    package var maxConditioningFrames = -1
    package var multimaskOutputInSAM = true
    package var multimaskMinPoints = 0
    package var multimaskMaxPoints = 1
    package var multimaskOutputForTracking = true
    package var useMultimaskTokenForObjectPointer = true
    package var memoryTemporalStride = 1
    /// Object pointers from other frames join the memory (`use_obj_ptrs_in_encoder`).
    package var useObjectPointers = true
    package var maxObjectPointers = 16
    /// SAM 2.1: the pointers get a temporal encoding, projected, signed by direction.
    package var addTemporalEncodingToPointers = true
    package var projectTemporalEncodingInPointers = true
    package var signedTemporalEncodingInPointers = true
    package var onlyPointersInThePast = true
    /// An absent object's pointer is `no_obj_ptr` (`fixed_no_obj_ptr`, `soft_no_obj_ptr` false).
    package var fixedNoObjectPointer = true
    /// SAM 2.1: `no_obj_embed_spatial` is added to an absent object's memory.
    package var noObjectEmbedSpatial = true
    /// `obj_ptr_proj` is an MLP of 3 layers (else one Linear).
    package var mlpObjectPointerProjection = true
    /// Background holes up to this area (low-res pixels) become foreground; 0 turns it off.
    /// ref: build_sam2_video_predictor — fill_hole_area=8
    package var fillHoleArea = 8
    /// A correction on a tracked frame makes it a conditioning frame (SAM2VideoPredictor's
    /// `add_all_frames_to_correct_as_cond`); false keeps only the first prompted frames as such.
    package var addCorrectionsAsConditioning = false
    /// At each pixel of the output logits only the highest-scoring object keeps its logit, the others
    /// are clamped to at most -10 (SAM2VideoPredictor's `non_overlap_masks`). nil is upstream's default,
    /// off, and keeps the key out of the JSON, so files made before keep their bytes.
    package var nonOverlappingMasks: Bool? = nil
    /// Memory attention: layers, heads, feed-forward width, RoPE base.
    package var memoryAttentionLayers = 4
    package var memoryAttentionHeads = 1
    package var memoryAttentionFeedForward = 2048
    package var ropeTheta: Double = 10_000
    /// The memory encoder's mask downsampler: conv kernel, stride, padding, total stride.
    package var maskDownsamplerKernel = 3
    package var maskDownsamplerStride = 2
    package var maskDownsamplerPadding = 1
    package var maskDownsamplerTotalStride = 16
    /// The fuser's CXBlocks: depthwise kernel and padding.
    package var fuserKernel = 7
    package var fuserPadding = 3

    package init() {}

    /// SAM 2.0's published configs: no temporal encoding on the pointers, no spatial no-object embedding.
    package static var sam2_0: SAM2VideoConfig {
        var config = SAM2VideoConfig()
        config.addTemporalEncodingToPointers = false
        config.projectTemporalEncodingInPointers = false
        config.signedTemporalEncodingInPointers = false
        config.noObjectEmbedSpatial = false
        return config
    }

    /// Weights hold the video modules when they hold the memory attention.
    package static func present(inShapes shapes: [String: [Int]]) -> Bool {
        shapes.keys.contains { $0.hasPrefix("memory_attention.") }
    }

    /// `base` with every size the weights show and the 2.0/2.1 switches their presence shows:
    /// `obj_ptr_tpos_proj` exists only with projected temporal encodings (2.1 turns on all three
    /// temporal-encoding switches together), `no_obj_embed_spatial` only when it is used, and
    /// `obj_ptr_proj.layers.*` only for the MLP projection.
    package static func inferred(fromShapes shapes: [String: [Int]], base: SAM2VideoConfig = SAM2VideoConfig()) -> SAM2VideoConfig {
        var config = base
        if let tpos = shapes["maskmem_tpos_enc"], tpos.count == 4 {
            config.numMaskmem = tpos[0]
            config.memoryDim = tpos[3]
        }
        config.memoryAttentionLayers = (0...).prefix { shapes["memory_attention.layers.\($0).linear1.weight"] != nil }.count
        if let linear1 = shapes["memory_attention.layers.0.linear1.weight"] { config.memoryAttentionFeedForward = linear1[0] }
        let hasTemporalProjection = shapes["obj_ptr_tpos_proj.weight"] != nil
        config.projectTemporalEncodingInPointers = hasTemporalProjection
        if hasTemporalProjection {
            config.addTemporalEncodingToPointers = true
            config.signedTemporalEncodingInPointers = true
        } else if base.projectTemporalEncodingInPointers {
            // 2.0's published configs add no temporal encoding at all.
            config.addTemporalEncodingToPointers = false
            config.signedTemporalEncodingInPointers = false
        }
        config.noObjectEmbedSpatial = shapes["no_obj_embed_spatial"] != nil
        config.useObjectPointers = shapes.keys.contains { $0.hasPrefix("obj_ptr_proj.") }
        config.mlpObjectPointerProjection = shapes["obj_ptr_proj.layers.0.weight"] != nil
        if let first = shapes["memory_encoder.mask_downsampler.encoder.0.weight"], first.count == 4 {
            config.maskDownsamplerKernel = first[2]
            // Each downsampling conv multiplies the channels by stride²: 1 -> stride² (ref: MaskDownSampler.__init__).
            let stride = Int(Double(first[0]).squareRoot().rounded())
            if stride * stride == first[0], stride > 1 {
                config.maskDownsamplerStride = stride
                config.maskDownsamplerPadding = first[2] == stride ? 0 : (first[2] - 1) / 2
                let convs = (0...).prefix { shapes["memory_encoder.mask_downsampler.encoder.\($0 * 3).weight"] != nil }.count - 1
                if convs >= 1 { config.maskDownsamplerTotalStride = (0..<convs).reduce(1) { product, _ in product * stride } }
            }
        }
        if let dwconv = shapes["memory_encoder.fuser.layers.0.dwconv.weight"], dwconv.count == 4 {
            config.fuserKernel = dwconv[2]
            config.fuserPadding = dwconv[2] / 2
        }
        return config
    }
}
