import SAMKernels
import SAMTensor

/// SAM 2's trunk (sam2/modeling/backbones/hieradet.py `Hiera`): a 7x7 stride-4 patch embedding,
/// the windowed absolute position embedding, and multi-scale blocks in stages whose last blocks'
/// outputs are the four feature maps (finest first) the FPN neck takes.
package struct Hiera: Sendable {
    package static let key = "trunk"

    package let path: String
    package let config: HieraConfig
    /// `patch_embed.proj`: Conv2d(3, embedDim, 7, stride 4, padding 3).
    package let patchEmbed: NN.Conv2d
    /// `_get_pos_embed((H, W))` for the patch grid, as tokens [H*W, embedDim]: computed once.
    package let positionEmbedding: FloatTensor
    package let blocks: [HieraBlock]

    /// Widths, depth and stage lengths from the weights, checked against `config`.
    /// ref: hieradet.py Hiera.__init__
    package init(weights: WeightStore, path: String, config: HieraConfig) throws(WeightError) {
        self.path = path
        self.config = config
        let patchKey = modulePath(path, "patch_embed.proj")
        patchEmbed = try NN.Conv2d(weights: weights, path: patchKey, inChannels: config.inChannels, outChannels: nil,
                                   kernel: HieraConfig.patchKernel, stride: HieraConfig.patchStride, padding: HieraConfig.patchPadding)
        let dim = patchEmbed.outChannels
        try NN.requireConsistent(dim, config.embedDim, field: "imageEncoder.embedDim", key: patchKey + ".weight", source: weights.source)

        let blocksPath = modulePath(path, "blocks")
        let depth = NN.childCount(blocksPath, in: weights)
        try NN.requireConsistent(depth, config.depth, field: "imageEncoder.stages (their sum)", key: blocksPath, source: weights.source)
        guard config.stages.allSatisfy({ $0 >= 1 }), config.windowSpec.count == config.stages.count,
              config.queryPoolStages >= 0, config.queryPoolStages < config.stages.count, config.queryStride >= 1 else {
            throw .invalid(key: blocksPath, reason: "config stages \(config.stages), windows \(config.windowSpec), "
                           + "q_pool \(config.queryPoolStages) do not describe a Hiera", source: weights.source)
        }
        if let problem = config.geometryProblem {
            throw .invalid(key: blocksPath, reason: "the config's geometry cannot run: \(problem)", source: weights.source)
        }
        var blocks: [HieraBlock] = []
        for (index, layout) in config.blockLayouts.enumerated() {
            let blockPath = "\(blocksPath).\(index)"
            // A block changes width exactly where the weights have its shortcut projection.
            if weights.contains("\(blockPath).proj.weight") != (layout.dim != layout.dimOut) {
                throw .invalid(key: "\(blockPath).proj.weight", reason: "the config's stages \(config.stages) "
                               + (layout.dim != layout.dimOut ? "start a stage at block \(index), which has no proj"
                                                             : "do not start a stage at block \(index), which has a proj"),
                               source: weights.source)
            }
            blocks.append(try HieraBlock(weights: weights, path: blockPath, layout: layout, mlpRatio: config.mlpRatio))
        }
        self.blocks = blocks

        let grid = config.patchGridSize
        positionEmbedding = try Self.positionEmbedding(weights: weights, path: path, dim: dim, grid: grid)
    }

    /// Exports that fold `_get_pos_embed` into a constant ([1, H, W, C]) give it under
    /// `foldedPositionEmbeddingKey`; checkpoints give `pos_embed` and `pos_embed_window`, from
    /// which it is computed. With both, they must agree (within float rounding of the bicubic resize).
    static func positionEmbedding(weights: WeightStore, path: String, dim: Int, grid: Int) throws(WeightError) -> FloatTensor {
        let foldedKey = path + ":pos_embed"
        let folded = try weights.takeIfPresent(foldedKey, shape: [1, grid, grid, dim]).map { $0.reshaped([grid * grid, dim]) }
        let backgroundKey = modulePath(path, "pos_embed")
        if let folded, !weights.contains(backgroundKey) { return folded }
        let background = try NN.take(backgroundKey, shape: [1, dim, nil, nil], from: weights)
        guard background.shape[2] >= 1, background.shape[3] >= 1 else {
            throw .invalid(key: backgroundKey, reason: "shape \(Shape.text(background.shape)) holds no position", source: weights.source)
        }
        let windowKey = modulePath(path, "pos_embed_window")
        let window = try NN.take(windowKey, shape: [1, dim, nil, nil], from: weights)
        let side = window.shape[2]
        guard side >= 1, window.shape[3] == side, grid % side == 0 else {
            throw .invalid(key: windowKey, reason: "shape \(Shape.text(window.shape)) does not tile the \(grid)x\(grid) patch grid",
                           source: weights.source)
        }
        let computed = windowedPositionEmbedding(background: background, window: window, grid: grid)
        if let folded {
            // Exporters resize in float32: a few ulp of values near 1 apart from this float64 resize.
            let worst = zip(folded.data, computed.data).map { abs($0 - $1) }.max() ?? 0
            guard worst <= 1e-5 else {
                throw .invalid(key: foldedKey, reason: "differs from the one \(backgroundKey) and \(windowKey) give by \(worst)",
                               source: weights.source)
            }
        }
        return computed
    }

    /// ref: hieradet.py Hiera._get_pos_embed — F.interpolate(pos_embed, (h, w), mode="bicubic") +
    /// pos_embed_window.tile(...), permuted to [h, w, C] (here tokens [h*w, C]).
    static func windowedPositionEmbedding(background: FloatTensor, window: FloatTensor, grid: Int) -> FloatTensor {
        let channels = background.shape[1], side = window.shape[2]
        var embedding = Kernels.resizeBicubic(background, height: grid, width: grid)
        embedding.data.withUnsafeMutableBufferPointer { resized in
            window.data.withUnsafeBufferPointer { tile in
                for c in 0..<channels {
                    for y in 0..<grid {
                        for x in 0..<grid {
                            resized[(c * grid + y) * grid + x] += tile[(c * side + y % side) * side + x % side]
                        }
                    }
                }
            }
        }
        return Kernels.nchwToTokens(embedding).reshaped([grid * grid, channels])
    }

    /// [B, 3, S, S] -> the last block of every stage's output, NCHW, finest first.
    /// ref: hieradet.py Hiera.forward
    package func callAsFunction(_ image: FloatTensor, observer: ModuleObserver? = nil) -> [FloatTensor] {
        let batch = image.shape[0]
        let stageObserver = StageObservation.observer(for: observer)
        let patches = patchEmbed(image, observer: stageObserver)
        var grid = GridSize(height: patches.shape[2], width: patches.shape[3])
        var x = Kernels.nchwToTokens(patches)
        stageObserver?(modulePath(path, "patch_embed"), x.reshaped([batch, grid.height, grid.width, x.shape[2]]))
        // ref: forward — x = x + self._get_pos_embed(x.shape[1:3]), the same table for every image
        Kernels.add(&x, repeating: positionEmbedding)
        stageObserver?("\(path):pos_embed", positionEmbedding.reshaped([1, grid.height, grid.width, x.shape[2]]))
        StageObservation.finished(modulePath(path, "patch_embed"), x, observer)
        var outputs: [FloatTensor] = []
        let ends = Set(config.stageEnds)
        for (index, block) in blocks.enumerated() {
            x = block(x, grid: grid, observer: stageObserver)
            StageObservation.finished(block.path, x, observer)
            grid = block.outputGrid(grid)
            // ref: forward — feats = x.permute(0, 3, 1, 2) at every stage end (return_interm_layers)
            if ends.contains(index) { outputs.append(Kernels.tokensToNCHW(x, height: grid.height, width: grid.width)) }
        }
        return outputs
    }
}
