extension SAMConfig {
    /// SAM 2.1 with the given Hiera: SAM's prompt encoder sizes, SAM 2's decoder additions, the
    /// input and embedding grid from the Hiera (SAM2Base: image_size // backbone_stride 16).
    /// ref: sam2/modeling/sam2_base.py SAM2Base._build_sam_heads; sam2/build_sam.py build_sam2
    package static func sam2(_ hiera: HieraConfig) -> SAMConfig {
        var config = SAMConfig(imageEncoder: AnyImageEncoderConfig(hiera, family: HieraFamily.self))
        config.promptEncoder.embedDim = hiera.neckDim
        config.promptEncoder.inputImageSize = hiera.imageSize
        config.promptEncoder.imageEmbeddingSize = hiera.embeddingGridSize
        config.maskDecoder.transformerDim = hiera.neckDim
        config.maskDecoder.familyOptions[SAM2DecoderOptions.self] = SAM2DecoderOptions(highResolutionFeatures: hiera.highResolutionFeatures)
        return config
    }
}
