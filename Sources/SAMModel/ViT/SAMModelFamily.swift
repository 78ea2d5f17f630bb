/// The original SAM: ViT-B/L/H with its prompt encoder and mask decoder.
/// ref: segment_anything/build_sam.py sam_model_registry
package enum SAMModelFamily: ModelFamily {
    package static let name = "sam"
    package static let imageEncoderFamilies: [any ImageEncoderFamily.Type] = [ViTFamily.self]
    package static let maskDecoderFamily: any MaskDecoderFamily.Type = SAMMaskDecoderFamily.self
}
