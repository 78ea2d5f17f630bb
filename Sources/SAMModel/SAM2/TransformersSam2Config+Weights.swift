import Foundation
import SAMTensor

/// A transformers config.json and its `model.safetensors` are written together by `save_pretrained`,
/// so a video size the file states and the weights contradict means the two do not belong together
/// (a hand edit, a file from another model). Sizes the weights show are otherwise read from them
/// (`SAM2VideoConfig.inferred`); this says where the file disagrees, field by field, instead.
extension TransformersSam2Config {
    package struct Disagreement: Sendable, Equatable, CustomStringConvertible {
        /// transformers' field name and the value the file gives it (or its default).
        package let field: String
        package let stated: String
        /// The canonical name of the tensor that shows otherwise, and what it shows.
        package let tensor: String
        package let found: String

        package var description: String { "\(field) = \(stated), but \(tensor) \(found)" }
    }

    /// Every video size of this file (transformers' default where it says nothing) that the weights'
    /// shapes (canonical names) contradict; empty when the file is not a Sam2VideoConfig or the
    /// weights hold no video modules.
    /// ref: modeling_sam2_video.py Sam2VideoModel.__init__, Sam2VideoMemoryAttention, Sam2VideoMemoryEncoder
    package func videoDisagreements(withShapes shapes: [String: [Int]]) -> [Disagreement] {
        guard isVideo, SAM2VideoConfig.present(inShapes: shapes) else { return [] }
        var found: [Disagreement] = []
        func dimension(_ field: String, _ stated: Int, _ tensor: String, _ axis: Int) {
            guard let shape = shapes[tensor], shape.count > axis, shape[axis] != stated else { return }
            found.append(Disagreement(field: field, stated: "\(stated)", tensor: tensor, found: "has shape \(Shape.text(shape))"))
        }
        func count(_ field: String, _ stated: Int, _ pattern: (Int) -> String) {
            let present = (0...).prefix { shapes[pattern($0)] != nil }.count
            guard present != stated else { return }
            found.append(Disagreement(field: field, stated: "\(stated)", tensor: pattern(present),
                                      found: "is \(present < stated ? "missing" : "present") (\(present) in the weights)"))
        }
        func presence(_ field: String, _ stated: Bool, _ tensor: String) {
            guard (shapes[tensor] != nil) != stated else { return }
            found.append(Disagreement(field: field, stated: "\(stated)", tensor: tensor,
                                      found: stated ? "is missing" : "is present"))
        }

        dimension("num_maskmem", numMaskmem ?? 7, "maskmem_tpos_enc", 0)
        dimension("memory_encoder_output_channels", memoryEncoderOutputChannels ?? 64, "maskmem_tpos_enc", 3)
        dimension("memory_encoder_output_channels", memoryEncoderOutputChannels ?? 64, "memory_encoder.out_proj.weight", 0)
        count("memory_attention_num_layers", memoryAttentionNumLayers ?? 4) { "memory_attention.layers.\($0).linear1.weight" }
        dimension("memory_attention_feed_forward_hidden_size", memoryAttentionFeedForwardHiddenSize ?? 2048,
                  "memory_attention.layers.0.linear1.weight", 0)
        dimension("memory_attention_hidden_size", memoryAttentionHiddenSize ?? 256, "memory_attention.norm.weight", 0)
        dimension("memory_encoder_hidden_size", memoryEncoderHiddenSize ?? 256, "memory_encoder.pix_feat_proj.weight", 0)

        // ref: memory_encoder.py MaskDownSampler: log(total)/log(stride) steps of (conv, norm, GELU),
        // each conv stride² times wider, then the final conv to embed_dim.
        let stride = maskDownsamplerStride ?? 2, total = maskDownsamplerTotalStride ?? 16
        let steps = stride > 1 && total >= 1 ? Int((log2(Double(total)) / log2(Double(stride))).rounded(.down)) : 0
        let downsampler = "memory_encoder.mask_downsampler.encoder"
        dimension("mask_downsampler_kernel_size", maskDownsamplerKernelSize ?? 3, "\(downsampler).0.weight", 2)
        dimension("mask_downsampler_stride", stride * stride, "\(downsampler).0.weight", 0)
        count("mask_downsampler_total_stride / mask_downsampler_stride (\(steps) steps)", steps) { "\(downsampler).\($0 * 3 + 1).weight" }
        dimension("mask_downsampler_embed_dim", maskDownsamplerEmbedDim ?? 256, "\(downsampler).\(steps * 3).weight", 0)

        count("memory_fuser_num_layers", memoryFuserNumLayers ?? 2) { "memory_encoder.fuser.layers.\($0).dwconv.weight" }
        dimension("memory_fuser_embed_dim", memoryFuserEmbedDim ?? 256, "memory_encoder.fuser.layers.0.dwconv.weight", 0)
        dimension("memory_fuser_kernel_size", memoryFuserKernelSize ?? 7, "memory_encoder.fuser.layers.0.dwconv.weight", 2)
        dimension("memory_fuser_intermediate_dim", memoryFuserIntermediateDim ?? 1024, "memory_encoder.fuser.layers.0.pwconv1.weight", 0)

        presence("enable_temporal_pos_encoding_for_object_pointers", enableTemporalPosEncodingForObjectPointers ?? true,
                 "obj_ptr_tpos_proj.weight")
        presence("enable_occlusion_spatial_embedding", enableOcclusionSpatialEmbedding ?? true, "no_obj_embed_spatial")
        return found
    }
}
