/// The `imageEncoder` object of an EfficientViT-SAM config.json (converters/export_efficientvit_sam.py):
/// the keys that change what is computed are read; derived and descriptive ones (`stages`,
/// `neckDim`, `outputGrid`, `neck.inputChannels`, ...) are ignored. Keys that name an operation
/// (activation, norm, upsampling mode, fuse) must name the one this port runs.
extension EfficientViTConfig: Codable {
    private enum Keys: String, CodingKey {
        case imageSize, inChannels, widths, depths, blockTypes, expandRatios, fewerNorm, qkvDim, headsRatio
        case backbone, activation, norm, attention, neck, outputNorm, batchNormEps, imagePreprocessing, upstreamImageSize
    }

    private enum AttentionKeys: String, CodingKey { case kernel, eps }
    private enum OutputNormKeys: String, CodingKey { case type, eps }

    /// The operations this port runs, as config.json names them.
    static let backbone = "EfficientViTLargeBackbone", activation = "gelu_tanh", norm = "bn2d"
    static let attentionKernel = "relu", outputNorm = "ln2d"

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        try Self.require(container, .backbone, is: Self.backbone)
        try Self.require(container, .activation, is: Self.activation)
        try Self.require(container, .norm, is: Self.norm)
        imageSize = try container.decode(Int.self, forKey: .imageSize)
        inChannels = try container.decodeIfPresent(Int.self, forKey: .inChannels) ?? 3
        widths = try container.decode([Int].self, forKey: .widths)
        depths = try container.decode([Int].self, forKey: .depths)
        blockTypes = try container.decode([EfficientViTBlockType].self, forKey: .blockTypes)
        expandRatios = try container.decode([Double].self, forKey: .expandRatios)
        fewerNorm = try container.decode([Bool].self, forKey: .fewerNorm)
        qkvDim = try container.decodeIfPresent(Int.self, forKey: .qkvDim) ?? 32
        headsRatio = try container.decodeIfPresent(Double.self, forKey: .headsRatio) ?? 1
        neck = try container.decode(EfficientViTNeckConfig.self, forKey: .neck)
        batchNormEps = try container.decodeIfPresent(Double.self, forKey: .batchNormEps) ?? 1e-6
        attentionEps = 1e-15
        if container.contains(.attention) {
            let attention = try container.nestedContainer(keyedBy: AttentionKeys.self, forKey: .attention)
            try Self.require(attention, .kernel, is: Self.attentionKernel)
            attentionEps = try attention.decodeIfPresent(Double.self, forKey: .eps) ?? attentionEps
        }
        outputNormEps = 1e-6
        if container.contains(.outputNorm) {
            let outputNorm = try container.nestedContainer(keyedBy: OutputNormKeys.self, forKey: .outputNorm)
            try Self.require(outputNorm, .type, is: Self.outputNorm)
            outputNormEps = try outputNorm.decodeIfPresent(Double.self, forKey: .eps) ?? outputNormEps
        }
        var preprocessing = try container.decodeIfPresent(EfficientViTPreprocessing.self, forKey: .imagePreprocessing) ?? .imageNet
        // ref: sam.py EfficientViTSam.image_size = (prompt frame, encoder input)
        if let frames = try container.decodeIfPresent([Int].self, forKey: .upstreamImageSize) {
            guard frames.count == 2, frames[1] == imageSize else {
                throw DecodingError.dataCorruptedError(forKey: .upstreamImageSize, in: container, debugDescription:
                    "upstreamImageSize \(frames) is not [prompt frame, imageSize \(imageSize)]")
            }
            if !container.contains(.imagePreprocessing) { preprocessing.promptFrameSize = frames[0] }
        }
        imagePreprocessing = preprocessing
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(Self.backbone, forKey: .backbone)
        try container.encode(Self.activation, forKey: .activation)
        try container.encode(Self.norm, forKey: .norm)
        try container.encode(imageSize, forKey: .imageSize)
        try container.encode(inChannels, forKey: .inChannels)
        try container.encode(widths, forKey: .widths)
        try container.encode(depths, forKey: .depths)
        try container.encode(blockTypes, forKey: .blockTypes)
        try container.encode(expandRatios, forKey: .expandRatios)
        try container.encode(fewerNorm, forKey: .fewerNorm)
        try container.encode(qkvDim, forKey: .qkvDim)
        try container.encode(headsRatio, forKey: .headsRatio)
        try container.encode(neck, forKey: .neck)
        try container.encode(batchNormEps, forKey: .batchNormEps)
        var attention = container.nestedContainer(keyedBy: AttentionKeys.self, forKey: .attention)
        try attention.encode(Self.attentionKernel, forKey: .kernel)
        try attention.encode(attentionEps, forKey: .eps)
        var outputNorm = container.nestedContainer(keyedBy: OutputNormKeys.self, forKey: .outputNorm)
        try outputNorm.encode(Self.outputNorm, forKey: .type)
        try outputNorm.encode(outputNormEps, forKey: .eps)
        try container.encode(imagePreprocessing, forKey: .imagePreprocessing)
        try container.encode([imagePreprocessing.promptFrameSize, imageSize], forKey: .upstreamImageSize)
    }

    /// A key that names an operation must name `expected` when present.
    static func require<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key, is expected: String) throws {
        guard let value = try container.decodeIfPresent(String.self, forKey: key), value != expected else { return }
        throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription:
            "'\(value)' is not ported (EfficientViT-SAM's encoder runs '\(expected)')")
    }
}

extension EfficientViTNeckConfig: Codable {
    private enum Keys: String, CodingKey {
        case inputStages, headWidth, headDepth, expandRatio, middleOp, outChannels, upsampleSize
        case upsampleMode, upsampleAlignCorners, upsampleCubicCoeff, fuse
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        try EfficientViTConfig.require(container, .upsampleMode, is: "bicubic")
        try EfficientViTConfig.require(container, .fuse, is: "add")
        if let alignCorners = try container.decodeIfPresent(Bool.self, forKey: .upsampleAlignCorners), alignCorners {
            throw DecodingError.dataCorruptedError(forKey: .upsampleAlignCorners, in: container, debugDescription:
                "align_corners=True is not ported (SamNeck's UpSampleLayer uses False)")
        }
        if let coefficient = try container.decodeIfPresent(Double.self, forKey: .upsampleCubicCoeff), coefficient != -0.75 {
            throw DecodingError.dataCorruptedError(forKey: .upsampleCubicCoeff, in: container, debugDescription:
                "cubic coefficient \(coefficient) is not PyTorch's -0.75")
        }
        // "stage4" as the backbone's output dict names it (backbone.py forward), or the index.
        let names = try container.decode([String].self, forKey: .inputStages)
        inputStages = try names.map { name in
            guard name.hasPrefix("stage"), let index = Int(name.dropFirst("stage".count)), index >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: .inputStages, in: container, debugDescription:
                    "'\(name)' is not a backbone stage (\"stage<N>\")")
            }
            return index
        }
        headWidth = try container.decode(Int.self, forKey: .headWidth)
        headDepth = try container.decode(Int.self, forKey: .headDepth)
        expandRatio = try container.decode(Double.self, forKey: .expandRatio)
        middleOp = try container.decodeIfPresent(EfficientViTBlockType.self, forKey: .middleOp) ?? .fmb
        outChannels = try container.decodeIfPresent(Int.self, forKey: .outChannels) ?? 256
        upsampleSize = try container.decodeIfPresent(Int.self, forKey: .upsampleSize) ?? 64
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(inputStages.map { "stage\($0)" }, forKey: .inputStages)
        try container.encode(headWidth, forKey: .headWidth)
        try container.encode(headDepth, forKey: .headDepth)
        try container.encode(expandRatio, forKey: .expandRatio)
        try container.encode(middleOp, forKey: .middleOp)
        try container.encode(outChannels, forKey: .outChannels)
        try container.encode(upsampleSize, forKey: .upsampleSize)
        try container.encode("bicubic", forKey: .upsampleMode)
        try container.encode("add", forKey: .fuse)
    }
}

extension EfficientViTPreprocessing: Codable {
    private enum Keys: String, CodingKey { case resize, pixelUnits, pixelMean, pixelStd, promptFrameSize }

    /// The resize kind config.json names (not SAM's `longestSide`: two frames, 0-1 statistics).
    static let resize = "efficientvitSam"

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        try EfficientViTConfig.require(container, .resize, is: Self.resize)
        try EfficientViTConfig.require(container, .pixelUnits, is: "0-1")
        pixelMean = try container.decodeIfPresent([Double].self, forKey: .pixelMean) ?? Self.imageNet.pixelMean
        pixelStd = try container.decodeIfPresent([Double].self, forKey: .pixelStd) ?? Self.imageNet.pixelStd
        promptFrameSize = try container.decodeIfPresent(Int.self, forKey: .promptFrameSize) ?? Self.imageNet.promptFrameSize
        guard pixelMean.count == 3, pixelStd.count == 3, pixelMean.allSatisfy(\.isFinite),
              pixelStd.allSatisfy({ $0.isFinite && $0 > 0 }) else {
            throw DecodingError.dataCorruptedError(forKey: .pixelStd, in: container, debugDescription:
                "pixelMean and pixelStd need 3 finite values each, std positive")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(Self.resize, forKey: .resize)
        try container.encode("0-1", forKey: .pixelUnits)
        try container.encode(pixelMean, forKey: .pixelMean)
        try container.encode(pixelStd, forKey: .pixelStd)
        try container.encode(promptFrameSize, forKey: .promptFrameSize)
    }
}
