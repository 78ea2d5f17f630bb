/// An EfficientViT-SAM encoder's sizes read from a state dict's shapes: widths, depths, block types,
/// expand ratios, "fewer norm" layouts, the attention's head dim and heads, and the neck's sizes.
/// What no shape shows (the input size, the neck's upsampling size, eps values, the prompt frame,
/// the kind of a stage without blocks) comes from `base` or the published model with the same
/// widths, depths and blocks, else from L0 (five stages) or XL0 (six).
/// ref: efficientsam/models/efficientvit/backbone.py EfficientViTLargeBackbone.__init__,
/// build_local_block; models/nn/ops.py (parameter names); sam.py SamNeck.__init__
struct EfficientViTShapeInference {
    let shapes: [String: [Int]]
    static let stages = "image_encoder.backbone.stages", neck = "image_encoder.neck"

    private func shape(_ key: String, rank: Int = 4) -> [Int]? { ShapeQueries.shape(key, rank: rank, in: shapes) }
    private func has(_ key: String) -> Bool { shapes[key] != nil }

    func configuration(facts: EncoderFacts, base: EfficientViTConfig?) -> EfficientViTConfig? {
        let stages = Self.stages
        let count = ShapeQueries.childCount(stages, in: shapes)
        guard count > 0, let stem = shape("\(stages).0.op_list.0.conv.weight") else { return nil }
        let depths = (0..<count).map { max(ShapeQueries.childCount("\(stages).\($0).op_list", in: shapes) - 1, 0) }
        var widths = [stem[0]]
        for stage in 1..<max(count, 1) {
            widths.append(shape("\(stages).\(stage).op_list.0.main.point_conv.conv.weight")?[0] ?? 0)
        }
        let seenTypes = (0..<count).map { blockType(stage: $0, depth: depths[$0]) }
        let template = Self.template(widths: widths, depths: depths, types: seenTypes, base: base)
        var config = template
        config.inChannels = stem[1]
        config.widths = zip(widths, template.widths + Array(repeating: 0, count: count)).map { $0 > 0 ? $0 : $1 }
        config.depths = depths
        config.blockTypes = seenTypes.indices.map { seenTypes[$0] ?? template.blockTypes.element($0) ?? ($0 == 0 ? .res : .mb) }
        config.expandRatios = (0..<count).map { expandRatio(stage: $0, config: config) ?? template.expandRatios.element($0) ?? 4 }
        config.fewerNorm = (0..<count).map { fewerNorm(stage: $0, config: config) ?? template.fewerNorm.element($0) ?? false }
        readAttention(into: &config)
        readNeck(into: &config)
        if let imageSize = facts.imageSize { config.imageSize = imageSize }
        return config
    }

    /// `base` when it has these widths, depths and blocks, else the published model that has, else
    /// `base`, else L0 or XL0 by the stage count.
    static func template(widths: [Int], depths: [Int], types: [EfficientViTBlockType?], base: EfficientViTConfig?) -> EfficientViTConfig {
        func fits(_ candidate: EfficientViTConfig) -> Bool {
            candidate.widths == widths && candidate.depths == depths
                && zip(candidate.blockTypes, types).allSatisfy { $1 == nil || $0 == $1 } && candidate.blockTypes.count == types.count
        }
        if let base, fits(base) { return base }
        if let published = EfficientViTConfig.published.first(where: fits) { return published }
        return base ?? (widths.count == EfficientViTConfig.xl0.widths.count ? .xl0 : .l0)
    }

    /// The kind of a stage's blocks, from its first block (nil for a stage without blocks).
    func blockType(stage: Int, depth: Int) -> EfficientViTBlockType? {
        guard depth > 0 else { return nil }
        let block = "\(Self.stages).\(stage).op_list.1"
        if let aggregation = shape("\(block).context_module.main.aggreg.0.0.weight") {
            return aggregation[2] == 3 ? .att3 : .att
        }
        return localBlockType("\(block).main")
    }

    /// res, fmb or mb by the first conv's name under `main`.
    func localBlockType(_ main: String) -> EfficientViTBlockType? {
        if has("\(main).conv1.conv.weight") { return .res }
        if has("\(main).spatial_conv.conv.weight") { return .fmb }
        if has("\(main).inverted_conv.conv.weight") { return .mb }
        return nil
    }

    /// The first (expanding) conv's weight under a block's `main`.
    func expansionWeight(_ main: String) -> (key: String, shape: [Int])? {
        for name in ["conv1", "spatial_conv", "inverted_conv"] {
            let key = "\(main).\(name).conv.weight"
            if let found = shape(key) { return (key, found) }
        }
        return nil
    }

    /// mid / in of the stage's first block, else of its downsampling block divided by 4.
    func expandRatio(stage: Int, config: EfficientViTConfig) -> Double? {
        let width = config.widths[stage], stagePath = "\(Self.stages).\(stage).op_list"
        let firstBlock = config.blockTypes[stage].isAttention ? "\(stagePath).1.local_module.main" : "\(stagePath).1.main"
        if config.depths[stage] > 0, let mid = expansionWeight(firstBlock)?.shape[0], width > 0 {
            return Double(mid) / Double(width)
        }
        guard stage > 0, let mid = expansionWeight("\(stagePath).0.main")?.shape[0], config.widths[stage - 1] > 0 else { return nil }
        return Double(mid) / Double(config.widths[stage - 1]) / 4
    }

    /// A "fewer norm" stage's expanding convs have a bias (and no BatchNorm): read from the
    /// downsampling block (stage 0: its first block). ref: build_local_block use_bias by fewer_norm
    /// Weights whose BatchNorms an exporter folded give every conv a bias, so there it says nothing.
    func fewerNorm(stage: Int, config: EfficientViTConfig) -> Bool? {
        guard !batchNormsFoldedByExporter else { return nil }
        let stagePath = "\(Self.stages).\(stage).op_list"
        let main = stage > 0 ? "\(stagePath).0.main" : "\(stagePath).1.main"
        guard stage > 0 || (config.depths[0] > 0 && !config.blockTypes[0].isAttention),
              let expansion = expansionWeight(main) else { return nil }
        return has(String(expansion.key.dropLast("weight".count)) + "bias")
    }

    /// The stem's conv has no bias of its own (ConvLayer with a BatchNorm): with a bias and no
    /// BatchNorm statistics, the BatchNorms were folded into the convs (a TorchScript ONNX export).
    /// ref: backbone.py EfficientViTLargeBackbone.__init__ (stage 0's ConvLayer, norm="bn2d", use_bias=False)
    var batchNormsFoldedByExporter: Bool {
        let stem = "\(Self.stages).0.op_list.0"
        return has("\(stem).conv.bias") && !has("\(stem).norm.running_var")
    }

    /// qkvDim from the aggregation's grouped 1x1 conv [3 td, dim, 1, 1], the heads ratio from the qkv width.
    /// ref: ops.py LiteMLA.__init__
    func readAttention(into config: inout EfficientViTConfig) {
        guard let stage = config.blockTypes.indices.first(where: { config.blockTypes[$0].isAttention && config.depths[$0] > 0 }) else { return }
        let module = "\(Self.stages).\(stage).op_list.1.context_module.main"
        guard let grouped = shape("\(module).aggreg.0.1.weight"), let qkv = shape("\(module).qkv.conv.weight"), grouped[1] > 0 else { return }
        let dim = grouped[1], width = config.widths[stage]
        config.qkvDim = dim
        let heads = qkv[0] / 3 / dim, plain = width / dim
        if plain > 0 { config.headsRatio = heads == plain ? 1 : Double(heads) / Double(plain) }
    }

    /// The neck's widths and depth; which stages it reads: the template's when their widths match
    /// the input convs', else the deepest stages, deepest first (as every published model).
    /// ref: sam.py SamNeck.__init__
    func readNeck(into config: inout EfficientViTConfig) {
        let neck = Self.neck
        let inputs = ShapeQueries.childCount("\(neck).input_ops", in: shapes)
        let convs = (0..<inputs).compactMap { shape("\(neck).input_ops.\($0).op_list.0.conv.weight") }
        if convs.count == inputs, inputs > 0 {
            let channels = convs.map { $0[1] }
            let templateFits = config.neck.inputStages.count == inputs
                && zip(config.neck.inputStages, channels).allSatisfy { config.widths.indices.contains($0) && config.widths[$0] == $1 }
            if !templateFits { config.neck.inputStages = (0..<inputs).map { max(config.widths.count - 1 - $0, 0) } }
            config.neck.headWidth = convs[0][0]
        }
        config.neck.headDepth = ShapeQueries.childCount("\(neck).middle.op_list", in: shapes)
        let middle = "\(neck).middle.op_list.0.main"
        if let type = localBlockType(middle) { config.neck.middleOp = type }
        if let mid = expansionWeight(middle)?.shape[0], config.neck.headWidth > 0 {
            config.neck.expandRatio = Double(mid) / Double(config.neck.headWidth)
        }
        if let output = shape("\(neck).output_ops.0.op_list.0.conv.weight") { config.neck.outChannels = output[0] }
    }
}

extension Array {
    /// The element at `index`, nil past the end.
    fileprivate func element(_ index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
