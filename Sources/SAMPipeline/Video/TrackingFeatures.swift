import SAMModel
import SAMTensor

/// A frame's image features as video mode uses them: the coarsest map without `no_mem_embed`
/// [1, C, g, g] and the decoder's high-resolution maps (memory attention's `curr_pos`, the same for
/// every frame, is `TrackingModel`'s).
/// ref: sam2/sam2_video_predictor.py _get_image_feature; sam2_base.py _prepare_backbone_features
package struct TrackingFeatures: Sendable {
    package let embedding: FloatTensor
    package let highResolution: [FloatTensor]
    /// Memory attention's tokens after its first self-attention (`TrackingModel.firstSelfAttended`),
    /// when several objects are tracked on the frame and share them; nil: each object makes its own.
    package var firstSelfAttended: FloatTensor? = nil

    package var grid: Int { embedding.shape[2] }
    package var channels: Int { embedding.shape[1] }
}

/// One object's result on one frame, as SAM2VideoPredictor keeps it (`compact_current_out`): the
/// low-resolution mask logits after hole filling, the object-score logit, the object pointer and,
/// once encoded, the frame's memory (rounded to bfloat16, as upstream stores it).
public struct ObjectFrameOutput: Sendable {
    /// `pred_masks` [1, 1, S/4, S/4].
    public var lowResolutionLogits: FloatTensor
    /// The object-score logit (> 0: the object is on the frame).
    public var objectScore: Float
    /// `obj_ptr` [1, C].
    package var pointer: FloatTensor
    /// `maskmem_features` [1, mem_dim, g, g], bfloat16 values held as float; nil until encoded.
    package var memory: FloatTensor?
}

extension Float {
    /// The nearest bfloat16 (ties to even), as `tensor.to(torch.bfloat16)` rounds; NaN stays NaN.
    /// ref: c10/util/BFloat16.h round_to_nearest_even
    var roundedToBFloat16: Float {
        guard !isNaN else { return self }
        let bits = bitPattern
        let rounding: UInt32 = 0x7FFF + ((bits >> 16) & 1)
        return Float(bitPattern: (bits &+ rounding) & 0xFFFF_0000)
    }
}
