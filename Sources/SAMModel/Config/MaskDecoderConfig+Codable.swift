/// JSON as the synthesized conformance wrote it (the same keys and values, so earlier `.samw` files
/// keep their bytes and identities), plus each family's options under its own key.
extension MaskDecoderConfig: Codable {
    private enum CodingKeys: String, CodingKey {
        case transformerDim, depth, numHeads, mlpDim, attentionDownsampleRate, numMultimaskOutputs, iouHeadDepth, iouHeadHiddenDim
        case transformerLayerNormEps
    }

    package init(from decoder: any Decoder) throws {
        let shared = try decoder.container(keyedBy: CodingKeys.self)
        self.init(transformerDim: try shared.decode(Int.self, forKey: .transformerDim), depth: try shared.decode(Int.self, forKey: .depth),
                  numHeads: try shared.decode(Int.self, forKey: .numHeads), mlpDim: try shared.decode(Int.self, forKey: .mlpDim),
                  attentionDownsampleRate: try shared.decode(Int.self, forKey: .attentionDownsampleRate),
                  numMultimaskOutputs: try shared.decode(Int.self, forKey: .numMultimaskOutputs),
                  iouHeadDepth: try shared.decode(Int.self, forKey: .iouHeadDepth),
                  iouHeadHiddenDim: try shared.decode(Int.self, forKey: .iouHeadHiddenDim))
        transformerLayerNormEps = try shared.decodeIfPresent(Double.self, forKey: .transformerLayerNormEps)
        familyOptions = try FamilyDecoderOptions.decode(from: try decoder.container(keyedBy: AnyCodingKey.self))
    }

    package func encode(to encoder: any Encoder) throws {
        var shared = encoder.container(keyedBy: CodingKeys.self)
        try shared.encode(transformerDim, forKey: .transformerDim)
        try shared.encode(depth, forKey: .depth)
        try shared.encode(numHeads, forKey: .numHeads)
        try shared.encode(mlpDim, forKey: .mlpDim)
        try shared.encode(attentionDownsampleRate, forKey: .attentionDownsampleRate)
        try shared.encode(numMultimaskOutputs, forKey: .numMultimaskOutputs)
        try shared.encode(iouHeadDepth, forKey: .iouHeadDepth)
        try shared.encode(iouHeadHiddenDim, forKey: .iouHeadHiddenDim)
        try shared.encodeIfPresent(transformerLayerNormEps, forKey: .transformerLayerNormEps)
        var family = encoder.container(keyedBy: AnyCodingKey.self)
        try familyOptions.encode(into: &family)
    }
}
