import SAMTensor

/// SAM's ViT-B/L/H as an image-encoder family.
package enum ViTFamily: ImageEncoderFamily {
    package static let name = "vit"

    package static func makeEncoder(weights: WeightStore, prefix: String, config: ViTConfig) throws(WeightError) -> any ImageEncoder {
        try ImageEncoderViT(weights: weights, prefix: prefix, config: config)
    }

    /// Width, depth, patch and MLP widths from the shapes; with relative positions, the head dim
    /// (so the head count), the window size and which blocks are global from each block's
    /// `rel_pos_h` length (2 * side - 1 over the side it attends). Without them, heads, window and
    /// global blocks come from `base`, else from the published model of the same width.
    /// ref: segment_anything/build_sam.py build_sam_vit_{b,l,h}, image_encoder.py Attention.__init__
    package static func inferConfiguration(fromShapes shapes: [String: [Int]], facts: EncoderFacts,
                                          base: ViTConfig?) -> ViTConfig? {
        let prefix = "image_encoder"
        let depth = ShapeQueries.childCount("\(prefix).blocks", in: shapes)
        guard depth > 0, let patch = shapes["\(prefix).patch_embed.proj.weight"], patch.count == 4 else { return nil }
        let dim = patch[0]
        let published = [ViTConfig.vitB, .vitL, .vitH].first { $0.embedDim == dim }
        var config = base ?? published ?? ViTConfig(embedDim: dim, depth: depth, numHeads: max(1, dim / 64),
                                                    globalAttentionIndexes: [])
        config.embedDim = dim
        config.depth = depth
        config.inChannels = patch[1]
        config.patchSize = patch[2]
        if let position = shapes["\(prefix).pos_embed"], position.count == 4 {
            config.imageSize = position[1] * config.patchSize
        } else if let imageSize = facts.imageSize {
            config.imageSize = imageSize
        }
        if let lin1 = ShapeQueries.shape("\(prefix).blocks.0.mlp.lin1.weight", rank: 2, in: shapes), dim > 0 { config.mlpRatio = Double(lin1[0]) / Double(dim) }
        if let neck = ShapeQueries.shape("\(prefix).neck.0.weight", rank: 4, in: shapes) { config.neckDim = neck[0] }
        let tables = (0..<depth).map { shapes["\(prefix).blocks.\($0).attn.rel_pos_h"] }
        config.useRelativePositions = tables.allSatisfy { $0 != nil }
        guard tables.allSatisfy({ $0 == nil || $0?.count == 2 }) else { return config }  // the strict build names the wrong rank
        if config.useRelativePositions, let first = tables[0], first.count == 2, first[1] > 0, dim % first[1] == 0 {
            config.numHeads = dim / first[1]
            let grid = config.gridSize
            // A window as large as the grid attends exactly as a global block does.
            let sides = tables.map { (($0?[0] ?? 1) + 1) / 2 }
            config.globalAttentionIndexes = sides.indices.filter { sides[$0] == grid }
            if let window = sides.first(where: { $0 != grid }) { config.windowSize = window }
        }
        return config
    }
}

extension ViTConfig: ImageEncoderConfiguration {
    package var embeddingDim: Int { neckDim }
    package var embeddingGridSize: Int { gridSize }
    /// SAM's unless the configuration says otherwise (stored only when it differs, so files
    /// with SAM's statistics keep their bytes).
    package var preprocessing: ImagePreprocessing {
        get { imagePreprocessing ?? .sam }
        set { imagePreprocessing = newValue == .sam ? nil : newValue }
    }
    package var summary: String {
        "ViT \(imageSize)x\(imageSize), dim \(embedDim), depth \(depth), heads \(numHeads), patch \(patchSize), "
            + "window \(windowSize), global blocks \(globalAttentionIndexes), neck \(neckDim)"
    }
}

extension ImageEncoderViT: SingleMapImageEncoder {}
