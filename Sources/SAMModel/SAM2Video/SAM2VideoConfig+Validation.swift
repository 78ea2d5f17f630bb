extension SAM2VideoConfig {
    /// The video mode's numbers, checked with the rest of a configuration (a config.json or a `.samw`'s
    /// stored one is input): a temporal stride of 0 divides by zero when memories are picked, one object
    /// pointer with temporal encodings divides their positions by zero (NaN in every later frame, as
    /// upstream gives), a RoPE base of 0 makes every rotation NaN, and paddings or counts near Int.max
    /// allocate or overflow before any weight is compared with them. Each line names the field in this
    /// type's keys and in SAM2Base's. The bounds leave wide room around the published SAM 2 and 2.1
    /// models (7 memories of 64, stride 1, 16 pointers, RoPE base 10000, a 3x3 stride-2 downsampler).
    package func checkBounds(_ check: inout ConfigProblems) {
        check.require("video.numMaskmem (num_maskmem)", numMaskmem, in: 1...256)
        check.require("video.memoryDim (mem_dim)", memoryDim, in: ConfigBounds.channels)
        check.require(memorySigmoidScale.isFinite && memorySigmoidBias.isFinite,
                      "video.memorySigmoidScale / memorySigmoidBias (sigmoid_scale_for_mem_enc / sigmoid_bias_for_mem_enc) "
                        + "\(memorySigmoidScale) / \(memorySigmoidBias) are not finite")
        // 0 fails upstream as soon as an object has a conditioning frame (select_closest_cond_frames
        // asserts at least 2 when it has to choose); 1 only once it has two (checked when tracking).
        check.require(maxConditioningFrames == -1 || (1...4096).contains(maxConditioningFrames),
                      "video.maxConditioningFrames (max_cond_frames_in_attn) \(maxConditioningFrames) is neither -1 (every "
                        + "conditioning frame) nor in 1...4096")
        check.require("video.memoryTemporalStride (memory_temporal_stride_for_eval)", memoryTemporalStride, in: 1...1024)
        check.require("video.maxObjectPointers (max_obj_ptrs_in_encoder)", maxObjectPointers, in: 1...4096)
        // ref: sam2_base.py _prepare_memory_conditioned_features — obj_pos / t_diff_max, t_diff_max = max_obj_ptrs_in_encoder - 1
        check.require(!(useObjectPointers && addTemporalEncodingToPointers && maxObjectPointers == 1),
                      "video.maxObjectPointers (max_obj_ptrs_in_encoder) 1 with temporal encodings on the pointers "
                        + "(add_tpos_enc_to_obj_ptrs) divides their positions by 0")
        check.require("video.memoryAttentionLayers", memoryAttentionLayers, in: ConfigBounds.layers)
        check.require("video.memoryAttentionHeads (memory_attention num_heads)", memoryAttentionHeads, in: ConfigBounds.heads)
        check.require("video.memoryAttentionFeedForward (dim_feedforward)", memoryAttentionFeedForward, in: ConfigBounds.hiddenWidth)
        check.require("video.ropeTheta (rope_theta)", ropeTheta, in: 1...1e9)
        check.require("video.maskDownsamplerKernel", maskDownsamplerKernel, in: 1...64)
        check.require("video.maskDownsamplerStride", maskDownsamplerStride, in: 2...64)
        check.require("video.maskDownsamplerPadding", maskDownsamplerPadding, in: 0...max(0, min(maskDownsamplerKernel, 64)))
        check.require("video.maskDownsamplerTotalStride", maskDownsamplerTotalStride, in: 1...1024)
        check.require("video.fuserKernel", fuserKernel, in: 1...64)
        check.require("video.fuserPadding", fuserPadding, in: 0...max(0, min(fuserKernel, 64)))
    }
}
