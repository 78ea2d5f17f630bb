/// SAM 2 / 2.1 in image mode: Hiera and its FPN neck, SAM's prompt encoder, SAM 2's mask decoder.
/// ref: sam2/build_sam.py build_sam2; sam2/modeling/sam2_base.py SAM2Base
package enum SAM2ModelFamily: ModelFamily {
    package static let name = "sam2"
    package static let imageEncoderFamilies: [any ImageEncoderFamily.Type] = [HieraFamily.self]
    package static let maskDecoderFamily: any MaskDecoderFamily.Type = SAM2MaskDecoderFamily.self
    package static let maskDecoderOptions: [any MaskDecoderOptions.Type] = [SAM2DecoderOptions.self]

    /// SAM 2.1 tiny's configuration for weights only SAM 2 has (a decoder-only SAM 2 export included).
    package static func inferenceBase(fromShapes shapes: [String: [Int]]) -> SAMConfig? {
        SAMConfig.looksLikeSAM2(shapes) ? SAMConfig.sam2(.tiny) : nil
    }

    /// The decoder's transformer MLP width under SAM 2's naming and its object-score head.
    package static func refine(_ config: inout SAMConfig, fromShapes shapes: [String: [Int]]) {
        config.inferSAM2Decoder(fromShapes: shapes)
        if SAM2VideoConfig.present(inShapes: shapes) {
            config.videoMode = SAM2VideoConfig.inferred(fromShapes: shapes, base: config.videoMode ?? SAM2VideoConfig())
        }
    }
}
