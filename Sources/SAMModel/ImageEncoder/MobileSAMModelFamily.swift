/// MobileSAM: TinyViT with SAM's prompt encoder and mask decoder.
/// ref: mobile_sam/build_sam.py build_sam_vit_t
public enum MobileSAMModelFamily: ModelFamily {
    public static let name = "mobile_sam"
    public static let imageEncoderFamilies: [any ImageEncoderFamily.Type] = [TinyViTFamily.self]
    public static let maskDecoderFamily: any MaskDecoderFamily.Type = SAMMaskDecoderFamily.self
}
