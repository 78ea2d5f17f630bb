/// The five published EfficientViT-SAM encoders, as the zoo builds them (every norm eps 1e-6).
/// ref: efficientsam/models/efficientvit/backbone.py efficientvit_backbone_l0/l1/l2 (and the
/// EfficientViTLargeBackbone defaults: block, expand and fewer-norm lists); sam.py
/// efficientvit_sam_l0/l1/l2/xl0/xl1 (neck arguments, XL backbones, image sizes); sam_model_zoo.py
extension EfficientViTConfig {
    /// L*: five stages, 512 input, neck on stages 4, 3, 2.
    private static func large(depths: [Int], neckDepth: Int) -> EfficientViTConfig {
        EfficientViTConfig(imageSize: 512, widths: [32, 64, 128, 256, 512], depths: depths, blockTypes: [.res, .fmb, .fmb, .mb, .att],
                           expandRatios: [1, 4, 4, 4, 6], fewerNorm: [false, false, false, true, true],
                           neck: EfficientViTNeckConfig(inputStages: [4, 3, 2], headDepth: neckDepth, expandRatio: 1))
    }

    /// XL*: six stages, 1024 input, 3x3 attention aggregation, neck on stages 5, 4, 3.
    private static func extraLarge(depths: [Int], neckDepth: Int) -> EfficientViTConfig {
        EfficientViTConfig(imageSize: 1024, widths: [32, 64, 128, 256, 512, 1024], depths: depths,
                           blockTypes: [.res, .fmb, .fmb, .fmb, .att3, .att3], expandRatios: [1, 4, 4, 4, 4, 6],
                           fewerNorm: [false, false, false, false, true, true],
                           neck: EfficientViTNeckConfig(inputStages: [5, 4, 3], headDepth: neckDepth, expandRatio: 4))
    }

    package static let l0 = large(depths: [1, 1, 1, 4, 4], neckDepth: 4)
    package static let l1 = large(depths: [1, 1, 1, 6, 6], neckDepth: 8)
    package static let l2 = large(depths: [1, 2, 2, 8, 8], neckDepth: 12)
    package static let xl0 = extraLarge(depths: [0, 1, 1, 2, 3, 3], neckDepth: 6)
    package static let xl1 = extraLarge(depths: [1, 2, 2, 4, 6, 6], neckDepth: 12)

    package static let published: [EfficientViTConfig] = [.l0, .l1, .l2, .xl0, .xl1]
}
