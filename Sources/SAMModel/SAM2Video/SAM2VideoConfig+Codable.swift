/// A `video` section in this type's own key names (what a `.samw` stores) or in SAM2Base's and
/// SAM2VideoPredictor's argument names (what converters/export_sam2_video.py writes from the model it
/// ran, nested memory-attention and memory-encoder objects included). Missing keys keep their
/// defaults; keys neither names are ignored (sizes the weights give are read from them anyway).
extension SAM2VideoConfig {
    struct Key: CodingKey {
        let stringValue: String
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    /// Reads a `video` section in either naming (see above); missing keys keep their defaults.
    public init(from decoder: any Decoder) throws {
        self.init()
        let root = try decoder.container(keyedBy: Key.self)
        func read<T: Decodable>(_ into: inout T, _ names: String...) throws {
            for name in names where root.contains(Key(name)) {
                into = try root.decode(T.self, forKey: Key(name))
                return
            }
        }
        try read(&numMaskmem, "numMaskmem", "num_maskmem")
        try read(&memoryDim, "memoryDim", "mem_dim")
        try read(&memorySigmoidScale, "memorySigmoidScale", "sigmoid_scale_for_mem_enc")
        try read(&memorySigmoidBias, "memorySigmoidBias", "sigmoid_bias_for_mem_enc")
        try read(&binarizeMaskFromPoints, "binarizeMaskFromPoints", "binarize_mask_from_pts_for_mem_enc")
        try read(&useMaskInputAsOutput, "useMaskInputAsOutput", "use_mask_input_as_output_without_sam")
        try read(&maxConditioningFrames, "maxConditioningFrames", "max_cond_frames_in_attn")
        try read(&multimaskOutputInSAM, "multimaskOutputInSAM", "multimask_output_in_sam")
        try read(&multimaskMinPoints, "multimaskMinPoints", "multimask_min_pt_num")
        try read(&multimaskMaxPoints, "multimaskMaxPoints", "multimask_max_pt_num")
        try read(&multimaskOutputForTracking, "multimaskOutputForTracking", "multimask_output_for_tracking")
        try read(&useMultimaskTokenForObjectPointer, "useMultimaskTokenForObjectPointer", "use_multimask_token_for_obj_ptr")
        try read(&memoryTemporalStride, "memoryTemporalStride", "memory_temporal_stride_for_eval")
        try read(&useObjectPointers, "useObjectPointers", "use_obj_ptrs_in_encoder")
        try read(&maxObjectPointers, "maxObjectPointers", "max_obj_ptrs_in_encoder")
        try read(&addTemporalEncodingToPointers, "addTemporalEncodingToPointers", "add_tpos_enc_to_obj_ptrs")
        try read(&projectTemporalEncodingInPointers, "projectTemporalEncodingInPointers", "proj_tpos_enc_in_obj_ptrs")
        try read(&signedTemporalEncodingInPointers, "signedTemporalEncodingInPointers", "use_signed_tpos_enc_to_obj_ptrs")
        try read(&onlyPointersInThePast, "onlyPointersInThePast", "only_obj_ptrs_in_the_past_for_eval")
        try read(&fixedNoObjectPointer, "fixedNoObjectPointer", "fixed_no_obj_ptr")
        try read(&noObjectEmbedSpatial, "noObjectEmbedSpatial", "no_obj_embed_spatial")
        try read(&mlpObjectPointerProjection, "mlpObjectPointerProjection", "use_mlp_for_obj_ptr_proj")
        try read(&fillHoleArea, "fillHoleArea", "fill_hole_area")
        try read(&addCorrectionsAsConditioning, "addCorrectionsAsConditioning", "add_all_frames_to_correct_as_cond")
        var nonOverlapping = false
        try read(&nonOverlapping, "nonOverlappingMasks", "non_overlap_masks")
        nonOverlappingMasks = nonOverlapping ? true : nil
        // Switches this runtime does not implement: refused, never ignored.
        // ref: sam2/modeling/sam2_base.py _encode_new_memory (non_overlap_masks_for_mem_enc);
        // sam2/sam2_video_predictor.py add_new_points_or_box (clear_non_cond_mem_around_input)
        for (name, why) in [("non_overlap_masks_for_mem_enc", "constraining the masks across objects before they are encoded as memories"),
                            ("clear_non_cond_mem_around_input", "sam2 1.1.0's SAM2VideoPredictor itself fails with it: "
                                + "it calls _clear_obj_non_cond_mem_around_input, which it does not define")] {
            var on = false
            try read(&on, name)
            if on {
                throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath + [Key(name)], debugDescription:
                    "\(name)=true is not supported (\(why)); convert with it false, upstream's default"))
            }
        }
        try read(&memoryAttentionLayers, "memoryAttentionLayers")
        try read(&memoryAttentionHeads, "memoryAttentionHeads")
        try read(&memoryAttentionFeedForward, "memoryAttentionFeedForward")
        try read(&ropeTheta, "ropeTheta")
        try read(&maskDownsamplerKernel, "maskDownsamplerKernel")
        try read(&maskDownsamplerStride, "maskDownsamplerStride")
        try read(&maskDownsamplerPadding, "maskDownsamplerPadding")
        try read(&maskDownsamplerTotalStride, "maskDownsamplerTotalStride")
        try read(&fuserKernel, "fuserKernel")
        try read(&fuserPadding, "fuserPadding")
        if root.contains(Key("memory_attention")) {
            let attention = try root.nestedContainer(keyedBy: Key.self, forKey: Key("memory_attention"))
            if let layers = try attention.decodeIfPresent(Int.self, forKey: Key("num_layers")) { memoryAttentionLayers = layers }
            if let width = try attention.decodeIfPresent(Int.self, forKey: Key("dim_feedforward")) { memoryAttentionFeedForward = width }
            if let heads = try attention.decodeIfPresent(Int.self, forKey: Key("num_heads")) { memoryAttentionHeads = heads }
            if let theta = try attention.decodeIfPresent(Double.self, forKey: Key("rope_theta")) { ropeTheta = theta }
        }
        if root.contains(Key("memory_encoder")) {
            let encoder = try root.nestedContainer(keyedBy: Key.self, forKey: Key("memory_encoder"))
            if encoder.contains(Key("mask_downsampler")) {
                let downsampler = try encoder.nestedContainer(keyedBy: Key.self, forKey: Key("mask_downsampler"))
                if let value = try downsampler.decodeIfPresent(Int.self, forKey: Key("kernel_size")) { maskDownsamplerKernel = value }
                if let value = try downsampler.decodeIfPresent(Int.self, forKey: Key("stride")) { maskDownsamplerStride = value }
                if let value = try downsampler.decodeIfPresent(Int.self, forKey: Key("padding")) { maskDownsamplerPadding = value }
                if let value = try downsampler.decodeIfPresent(Int.self, forKey: Key("total_stride")) { maskDownsamplerTotalStride = value }
            }
            if encoder.contains(Key("fuser")) {
                let fuser = try encoder.nestedContainer(keyedBy: Key.self, forKey: Key("fuser"))
                if fuser.contains(Key("cx_block")) {
                    let block = try fuser.nestedContainer(keyedBy: Key.self, forKey: Key("cx_block"))
                    if let value = try block.decodeIfPresent(Int.self, forKey: Key("kernel_size")) { fuserKernel = value }
                    if let value = try block.decodeIfPresent(Int.self, forKey: Key("padding")) { fuserPadding = value }
                }
            }
        }
    }
}
