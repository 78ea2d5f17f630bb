import SAMTensor

/// MobileSAM's TinyViT as an image-encoder family.
package enum TinyViTFamily: ImageEncoderFamily {
    package static let name = "tiny_vit"

    package static func makeEncoder(weights: WeightStore, prefix: String, config: TinyViTConfig) throws(WeightError) -> any ImageEncoder {
        try TinyViT(weights: weights, prefix: prefix, config: config)
    }

    /// Widths, depths, heads and windows from the shapes; image size and merge strides, which no
    /// weight shows, from what an export graph states, else `base` (with upstream's stride rule
    /// when the widths differ from base's).
    /// ref: mobile_sam/modeling/tiny_vit_sam.py TinyViT.__init__
    package static func inferConfiguration(fromShapes shapes: [String: [Int]], facts: EncoderFacts,
                                          base: TinyViTConfig?) -> TinyViTConfig? {
        let prefix = "image_encoder"
        let stages = ShapeQueries.childCount("\(prefix).layers", in: shapes)
        guard stages > 0 else { return nil }
        let base = base ?? .mobileSAM
        func shape(_ key: String, rank: Int) -> [Int]? { ShapeQueries.shape(key, rank: rank, in: shapes) }
        var tiny = base
        if let imageSize = facts.imageSize { tiny.imageSize = imageSize }
        tiny.depths = (0..<stages).map { ShapeQueries.childCount("\(prefix).layers.\($0).blocks", in: shapes) }
        if let patch = shape("\(prefix).patch_embed.seq.2.c.weight", rank: 4) { tiny.embedDims = [patch[0]] }
        for stage in 1..<max(stages, 1) {
            if let merge = shape("\(prefix).layers.\(stage - 1).downsample.conv3.c.weight", rank: 4) { tiny.embedDims.append(merge[0]) }
        }
        var heads = base.numHeads, windows = base.windowSizes
        heads = Array(heads.prefix(stages)) + Array(repeating: heads.last ?? 1, count: max(0, stages - heads.count))
        windows = Array(windows.prefix(stages)) + Array(repeating: windows.last ?? 7, count: max(0, stages - windows.count))
        for stage in 1..<max(stages, 1) {
            guard let biases = shape("\(prefix).layers.\(stage).blocks.0.attn.attention_biases", rank: 2), biases.count == 2 else { continue }
            heads[stage] = biases[0]
            let side = Int(Double(biases[1]).squareRoot().rounded())
            if side * side == biases[1] { windows[stage] = side }
        }
        tiny.numHeads = heads
        tiny.windowSizes = windows
        if stages > 1, let fc1 = shape("\(prefix).layers.1.blocks.0.mlp.fc1.weight", rank: 2), fc1[1] > 0 {
            tiny.mlpRatio = Double(fc1[0]) / Double(fc1[1])
        }
        if let conv1 = shape("\(prefix).layers.0.blocks.0.conv1.c.weight", rank: 4), conv1[1] > 0 {
            tiny.mbconvExpandRatio = Double(conv1[0]) / Double(conv1[1])
        }
        if stages > 1, let local = shape("\(prefix).layers.1.blocks.0.local_conv.c.weight", rank: 4), local.count == 4 {
            tiny.localConvSize = local[2]
        }
        if let neck = shape("\(prefix).neck.0.weight", rank: 4) { tiny.neckDim = neck[0] }
        if let mergeStrides = facts.mergeStrides {
            tiny.mergeStrides = mergeStrides
        } else if tiny.embedDims.count == stages, tiny.embedDims != base.embedDims {
            tiny.mergeStrides = TinyViTConfig.upstreamMergeStrides(embedDims: tiny.embedDims)
        }
        return tiny
    }
}

extension TinyViTConfig: ImageEncoderConfiguration {
    package var embeddingDim: Int { neckDim }

    /// PatchEmbed's two stride-2 convs, then each PatchMerging's stride (3x3 convs, padding 1).
    package var embeddingGridSize: Int {
        var side = imageSize
        for stride in [2, 2] + mergeStrides { side = (side - 1) / max(stride, 1) + 1 }
        return side
    }

    /// SAM's unless the configuration says otherwise (stored only when it differs, so files
    /// with SAM's statistics keep their bytes).
    package var preprocessing: ImagePreprocessing {
        get { imagePreprocessing ?? .sam }
        set { imagePreprocessing = newValue == .sam ? nil : newValue }
    }

    package var summary: String {
        "TinyViT \(imageSize)x\(imageSize), dims \(embedDims), depths \(depths), heads \(numHeads), windows \(windowSizes), "
            + "merge strides \(mergeStrides), neck \(neckDim)"
    }
}

extension TinyViT: SingleMapImageEncoder {}
