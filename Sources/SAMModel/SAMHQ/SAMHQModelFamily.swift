import SAMTensor

/// SAM-HQ (HQ-SAM): SAM's ViT-B/L/H, or MobileSAM's TinyViT (Light HQ-SAM, `vit_tiny`), whose early
/// features feed a mask decoder with a high-quality output token (`SAMHQMaskDecoder`).
/// ref: segment_anything_hq/build_sam.py sam_model_registry (vit_b/l/h, vit_tiny)
package enum SAMHQModelFamily: ModelFamily {
    package static let name = "sam_hq"
    package static let imageEncoderFamilies: [any ImageEncoderFamily.Type] = [ViTFamily.self, TinyViTFamily.self]
    package static let maskDecoderFamily: any MaskDecoderFamily.Type = SAMHQMaskDecoderFamily.self
    package static let distinguishingKeys = SAMHQMaskDecoder.ownModules.map { "mask_decoder.\($0)." }

    /// The configured encoder, handing out its early features beside the embedding.
    package static func makeImageEncoder(weights: WeightStore, prefix: String, config: SAMConfig) throws(WeightError) -> any ImageEncoder {
        let base = try config.imageEncoder.makeEncoder(weights: weights, prefix: prefix)
        guard let early = EarlyFeatures(config.imageEncoder, prefix: prefix) else {
            throw .invalid(key: prefix, reason: "SAM-HQ takes no early features from a '\(config.imageEncoder.family)' encoder",
                           source: weights.source)
        }
        return HQImageEncoder(base: base, early: early)
    }

    package static func featureNames(_ config: SAMConfig) -> [String] {
        config.imageEncoder.featureNames + [HQImageEncoder.earlyFeatureName]
    }

    package static func featureShapes(_ config: SAMConfig) -> [[Int]] {
        let early = EarlyFeatures(config.imageEncoder, prefix: Sam.imageEncoderKey)
        return config.imageEncoder.featureShapes + [early.map { [1, $0.channels, $0.side, $0.side] } ?? [1, 0, 0, 0]]
    }
}

/// SAM-HQ's mask decoder as a decoder family: SAM's prompt layout.
package enum SAMHQMaskDecoderFamily: MaskDecoderFamily {
    package static let name = "sam_hq"
    package static let promptLayout = PromptLayout.sam

    package static func makeDecoder(weights: WeightStore, prefix: String, config: SAMConfig) throws(WeightError) -> any PromptMaskDecoder {
        try SAMHQMaskDecoder(weights: weights, prefix: prefix, config: config)
    }
}
