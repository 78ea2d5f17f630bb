import SAMKernels
import SAMTensor

/// The original SAM image encoder, ViT-B/L/H (segment_anything ImageEncoderViT): a 16x16 patch
/// embedding, an absolute position embedding, transformer blocks (windowed, and global at the
/// configured indexes) with decomposed relative positions, and SAM's neck.
/// [B, 3, 1024, 1024] normalised, padded image -> [B, 256, 64, 64] image embeddings.
package struct ImageEncoderViT: Sendable {
    package static let key = "image_encoder"

    package let path: String
    package let config: ViTConfig
    /// `patch_embed.proj` [embedDim, inChannels, patch, patch] and its bias.
    package let patchWeight: FloatTensor
    package let patchBias: FloatTensor
    /// `pos_embed` [1, grid, grid, embedDim] as tokens [grid * grid * embedDim].
    package let positionEmbedding: FloatTensor?
    package let blocks: [Block]
    package let neck: ImageEncoderNeck

    package var embedDim: Int { patchWeight.shape[0] }

    /// Widths and depth from the weights, checked against `config`.
    package init(weights: WeightStore, prefix: String = ImageEncoderViT.key, config: ViTConfig) throws(WeightError) {
        path = prefix
        self.config = config
        let patchKey = modulePath(prefix, "patch_embed.proj.weight")
        patchWeight = try NN.take(patchKey, shape: [nil, config.inChannels, config.patchSize, config.patchSize], from: weights)
        let dim = patchWeight.shape[0]
        try NN.requireConsistent(dim, config.embedDim, field: "embedDim", key: patchKey, source: weights.source)
        patchBias = try weights.take(modulePath(prefix, "patch_embed.proj.bias"), shape: [dim])
        guard config.imageSize >= config.patchSize, config.patchSize >= 1 else {
            throw .invalid(key: patchKey, reason: "image size \(config.imageSize) and patch size \(config.patchSize) make no grid",
                           source: weights.source)
        }
        let grid = config.gridSize
        // ref: image_encoder.py ImageEncoderViT.__init__: pos_embed zeros(1, img_size // patch_size, ..., embed_dim)
        positionEmbedding = try weights.takeIfPresent(modulePath(prefix, "pos_embed"), shape: [1, grid, grid, dim])
            .map { $0.reshaped([grid * grid * dim]) }

        let blocksPath = modulePath(prefix, "blocks")
        let depth = NN.childCount(blocksPath, in: weights)
        try NN.requireConsistent(depth, config.depth, field: "depth", key: blocksPath, source: weights.source)
        var blocks: [Block] = []
        for index in 0..<depth {
            let window = config.globalAttentionIndexes.contains(index) ? 0 : config.windowSize
            blocks.append(try Block(weights: weights, path: "\(blocksPath).\(index)", dim: dim, config: config, windowSize: window))
        }
        if let mlp = blocks.first?.mlp, mlp.hiddenDim != Int(Double(dim) * config.mlpRatio) {
            throw weights.configMismatch(mlp.lin1.path + ".weight", "mlp_ratio", weights: Double(mlp.hiddenDim) / Double(dim),
                                         config: config.mlpRatio, because: "shape \(mlp.lin1.weight.shape)")
        }
        self.blocks = blocks
        neck = try ImageEncoderNeck(weights: weights, path: modulePath(prefix, ImageEncoderNeck.key), inChannels: dim)
        try NN.requireConsistent(neck.outChannels, config.neckDim, field: "neckDim", key: neck.path + ".0.weight",
                                 source: weights.source)
    }

    package var inputShapeDescription: String { "[B, \(config.inChannels), \(config.imageSize), \(config.imageSize)]" }

    /// Encodes [B, 3, S, S] into [B, neckDim, S/16, S/16]. `observer` sees every module's output in
    /// PyTorch's order and layout: tokens as [B, H, W, C] (windows as [B * windows, ws, ws, C]).
    /// ref: segment_anything/modeling/image_encoder.py ImageEncoderViT.forward
    package func callAsFunction(_ image: FloatTensor, observer: ModuleObserver? = nil) throws(ImageEncoderError) -> FloatTensor {
        try self(image, observer: observer, tapping: []).embedding
    }

    /// The embedding, and the token outputs [B, H * W, C] of the blocks `taps` names (`<path>.blocks.i`).
    /// ref: sam-hq segment_anything/modeling/image_encoder.py ImageEncoderViT.forward — interm_embeddings
    package func callAsFunction(_ image: FloatTensor, observer: ModuleObserver?, tapping taps: Set<String>) throws(ImageEncoderError)
        -> (embedding: FloatTensor, tapped: [String: FloatTensor]) {
        try requireTappable(taps, among: blocks.map(\.path))
        var tapped: [String: FloatTensor] = [:]
        let shape = image.shape
        guard shape.count == 4, shape[0] >= 1, shape[1] == config.inChannels,
              shape[2] == config.imageSize, shape[3] == config.imageSize else {
            throw .imageShape(expected: inputShapeDescription, actual: shape)
        }
        let batch = shape[0], grid = config.gridSize, dim = embedDim
        let stageObserver = StageObservation.observer(for: observer)
        let observeGrid = stageObserver.map { observer in
            { (path: String, y: FloatTensor) in observer(path, Self.gridLayout(y)) } as ModuleObserver
        }
        // PatchEmbed: conv, then permute(0, 2, 3, 1) to [B, H, W, C].
        let patches = Kernels.conv2d(image, weight: patchWeight, bias: patchBias, stride: config.patchSize)
        stageObserver?(modulePath(path, "patch_embed.proj"), patches)
        var x = Kernels.nchwToTokens(patches)
        observeGrid?(modulePath(path, "patch_embed"), x)
        if let positionEmbedding {
            x.data.withUnsafeMutableBufferPointer { tokens in
                positionEmbedding.data.withUnsafeBufferPointer { embedding in
                    let count = grid * grid * dim
                    for b in 0..<batch {
                        for i in 0..<count { tokens[b * count + i] += embedding[i] }
                    }
                }
            }
        }
        StageObservation.finished(modulePath(path, "patch_embed"), x, observer)
        for block in blocks {
            x = block(x, observer: observeGrid)
            StageObservation.finished(block.path, x, observer)
            if taps.contains(block.path) { tapped[block.path] = x }
        }
        var y = Kernels.tokensToNCHW(x, height: grid, width: grid)
        y = neck(y, observer: stageObserver)
        StageObservation.finished(neck.path, y, observer)
        observer?(path, y)
        return (y, tapped)
    }

    /// [B, N, C] with N a square as [B, side, side, C] (the same bytes), other shapes unchanged.
    static func gridLayout(_ y: FloatTensor) -> FloatTensor {
        guard y.shape.count == 3 else { return y }
        let side = Int(Double(y.shape[1]).squareRoot().rounded())
        return side * side == y.shape[1] ? y.reshaped([y.shape[0], side, side, y.shape[2]]) : y
    }
}
