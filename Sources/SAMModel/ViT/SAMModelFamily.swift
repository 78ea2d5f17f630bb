/// The original SAM: ViT-B/L/H with its prompt encoder and mask decoder.
/// ref: segment_anything/build_sam.py sam_model_registry
public enum SAMModelFamily: ModelFamily {
    public static let name = "sam"
    public static let imageEncoderFamilies: [any ImageEncoderFamily.Type] = [ViTFamily.self]
    public static let maskDecoderFamily: any MaskDecoderFamily.Type = SAMMaskDecoderFamily.self
}
