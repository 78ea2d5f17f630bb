/// MobileSAM: TinyViT with SAM's prompt encoder and mask decoder.
/// ref: mobile_sam/build_sam.py build_sam_vit_t
package enum MobileSAMModelFamily: ModelFamily {
    package static let name = "mobile_sam"
    package static let imageEncoderFamilies: [any ImageEncoderFamily.Type] = [TinyViTFamily.self]
    package static let maskDecoderFamily: any MaskDecoderFamily.Type = SAMMaskDecoderFamily.self
}
