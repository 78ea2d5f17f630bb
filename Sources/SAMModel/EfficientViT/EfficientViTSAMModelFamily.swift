/// EfficientViT-SAM: the EfficientViT image encoder with SAM's prompt encoder and mask decoder, whose
/// transformer LayerNorms the zoo sets to eps 1e-6 (SAM's are 1e-5).
/// ref: efficientsam/models/efficientvit/sam.py build_efficientvit_sam; sam_model_zoo.py create_efficientvit_sam_model (set_norm_eps)
package enum EfficientViTSAMModelFamily: ModelFamily {
    package static let name = "efficientvit_sam"
    package static let imageEncoderFamilies: [any ImageEncoderFamily.Type] = [EfficientViTFamily.self]
    package static let maskDecoderFamily: any MaskDecoderFamily.Type = SAMMaskDecoderFamily.self

    /// What weights without a config do not say: the decoder's LayerNorm eps.
    /// ref: efficientsam/models/nn/norm.py set_norm_eps (every nn.LayerNorm of the model, 1e-6)
    package static func refine(_ config: inout SAMConfig, fromShapes shapes: [String: [Int]]) {
        config.maskDecoder.transformerLayerNormEps = 1e-6
    }
}
