import SAMKernels
import SAMTensor

/// What SAM 2's video mode adds to the image model: the memory encoder and attention, the object
/// pointers, `mask_downsample` (a mask prompt's input to the decoder), the memories' temporal
/// encodings and the no-object embeddings. Built from the weights when they hold them (a `.pt`
/// keeps them; image-mode files made before did not, and load without).
/// ref: sam2/modeling/sam2_base.py SAM2Base.__init__
package struct SAM2VideoModules: Sendable {
    /// The top-level weight names video mode owns.
    package static let weightNames: Set<String> = [
        "memory_attention", "memory_encoder", "obj_ptr_proj", "obj_ptr_tpos_proj", "mask_downsample",
        "maskmem_tpos_enc", "no_mem_pos_enc", "no_obj_ptr", "no_obj_embed_spatial",
    ]

    /// Whether `name` is one of video mode's weights.
    package static func owns(_ name: String) -> Bool {
        let top = name.split(separator: ".", maxSplits: 1).first.map(String.init) ?? name
        return weightNames.contains(top)
    }

    package let config: SAM2VideoConfig
    package let memoryAttention: MemoryAttention
    package let memoryEncoder: MemoryEncoder
    package let objectPointers: ObjectPointers
    /// `mask_downsample`: Conv2d(1, 1, 4, stride 4), a mask prompt at the input size to the decoder's mask input.
    package let maskDownsample: NN.Conv2d
    /// `maskmem_tpos_enc` [numMaskmem, 1, 1, mem_dim]: row numMaskmem - 1 - t for a memory t frames back (0: conditioning).
    package let memoryTemporalEncodings: FloatTensor
    /// `no_mem_pos_enc` [1, 1, C]: only read when the no-memory embedding is not added directly.
    package let noMemoryPositionEncoding: FloatTensor
    /// `no_obj_embed_spatial` [1, mem_dim], added to an absent object's memory (SAM 2.1).
    package let noObjectEmbedSpatial: FloatTensor?
    /// The model's width (the decoder's transformer width, `hidden_dim`).
    package let hiddenDim: Int

    package init(weights: WeightStore, config: SAM2VideoConfig, hiddenDim: Int) throws(WeightError) {
        self.config = config
        self.hiddenDim = hiddenDim
        memoryAttention = try MemoryAttention(weights: weights, path: "memory_attention", config: config, modelDim: hiddenDim)
        memoryEncoder = try MemoryEncoder(weights: weights, path: "memory_encoder", config: config, featureDim: hiddenDim)
        guard memoryEncoder.memoryDim == config.memoryDim, memoryAttention.memoryDim == config.memoryDim else {
            throw .invalid(key: "memory_encoder", reason: "memory width \(memoryEncoder.memoryDim) (encoder), "
                           + "\(memoryAttention.memoryDim) (attention keys) and config \(config.memoryDim) disagree", source: weights.source)
        }
        guard hiddenDim % config.memoryDim == 0 else {
            throw .invalid(key: "memory_encoder", reason: "the model width \(hiddenDim) is not a multiple of the memory width "
                           + "\(config.memoryDim) (object pointers are split into memory-wide tokens)", source: weights.source)
        }
        objectPointers = try ObjectPointers(weights: weights, config: config, hiddenDim: hiddenDim)
        maskDownsample = try NN.Conv2d(weights: weights, path: "mask_downsample", inChannels: 1, outChannels: 1, kernel: 4, stride: 4)
        memoryTemporalEncodings = try weights.take("maskmem_tpos_enc", shape: [config.numMaskmem, 1, 1, config.memoryDim])
        noMemoryPositionEncoding = try weights.take("no_mem_pos_enc", shape: [1, 1, hiddenDim])
        noObjectEmbedSpatial = config.noObjectEmbedSpatial
            ? try weights.take("no_obj_embed_spatial", shape: [1, config.memoryDim]) : nil
    }

    /// The temporal encoding [mem_dim] of a memory `framesBack` frames before (0: a conditioning frame's).
    /// ref: _prepare_memory_conditioned_features — maskmem_tpos_enc[num_maskmem - t_pos - 1]
    package func memoryTemporalEncoding(position: Int) -> ArraySlice<Float> {
        let dim = config.memoryDim, row = config.numMaskmem - position - 1
        return memoryTemporalEncodings.data[(row * dim)..<((row + 1) * dim)]
    }
}
