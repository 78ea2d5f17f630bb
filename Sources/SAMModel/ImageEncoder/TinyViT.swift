import SAMKernels
import SAMTensor

/// MobileSAM's image encoder: TinyViT-5M with SAM's neck (tiny_vit_sam.py TinyViT; the
/// classification head is never run). [B, 3, 1024, 1024] normalised, padded image ->
/// [B, 256, 64, 64] image embeddings for MobileSAM's weights.
///
/// The module tree mirrors PyTorch's: every module keeps its state-dict `path`, which names it in
/// load errors and in the observer callback. Widths, depths, head counts, window sizes, MLP and
/// MBConv ratios and the local conv size are read from the weight shapes and checked against the
/// config; the image size and PatchMerging strides, which no weight shows, come from the config.
/// BatchNorm is folded into the preceding convolutions at load.
package struct TinyViT: Sendable {
    package static let key = "image_encoder"

    /// Prefix of every weight of this encoder ("image_encoder", or "" for an encoder-only state dict).
    package let path: String
    package let config: TinyViTConfig
    package let patchEmbed: PatchEmbed
    /// `layers.0` is a ConvLayer, the others BasicLayers (as upstream builds them).
    package let layers: [Layer]
    package let neck: Neck
    /// Side of the map entering the neck (64 for MobileSAM; upstream hard-codes the 64).
    package let outputResolution: GridSize

    /// One stage: `layers.i`.
    package enum Layer: Sendable {
        case conv(ConvLayer)
        case basic(BasicLayer)

        package var path: String {
            switch self {
            case .conv(let layer): layer.path
            case .basic(let layer): layer.path
            }
        }

        package var outputDim: Int {
            switch self {
            case .conv(let layer): layer.outputDim
            case .basic(let layer): layer.outputDim
            }
        }

        package var outputResolution: GridSize {
            switch self {
            case .conv(let layer): layer.outputResolution
            case .basic(let layer): layer.outputResolution
            }
        }

        package var downsample: PatchMerging? {
            switch self {
            case .conv(let layer): layer.downsample
            case .basic(let layer): layer.downsample
            }
        }

        /// Stage 0 takes the NCHW map from patch_embed; later stages take tokens. With a
        /// downsample (every stage but the last) the output is tokens.
        package func callAsFunction(_ x: FloatTensor, observer: ModuleObserver?) -> FloatTensor {
            switch self {
            case .conv(let layer): layer(x, observer: observer)
            case .basic(let layer): layer(x, observer: observer)
            }
        }
    }

    /// Loads every weight under `prefix` that the encoder uses (and the unused classification head,
    /// so that `weights.finish()` can still flag genuinely unexpected keys). Throws a `WeightError`
    /// naming the state-dict key when a weight is missing, has the wrong shape, or implies a
    /// hyperparameter that contradicts `config`.
    package init(weights: WeightStore, prefix: String = TinyViT.key, config: TinyViTConfig = .mobileSAM) throws(WeightError) {
        path = prefix
        self.config = config
        let stageCount = config.embedDims.count
        guard stageCount >= 2, config.depths.count == stageCount, config.numHeads.count == stageCount,
              config.windowSizes.count == stageCount, config.mergeStrides.count == stageCount - 1,
              config.mergeStrides.allSatisfy({ $0 >= 1 }) else {
            throw .invalid(key: modulePath(prefix, "layers"),
                           reason: "config lists \(config.embedDims.count) embed dims, \(config.depths.count) depths, "
                               + "\(config.numHeads.count) head counts, \(config.windowSizes.count) window sizes and "
                               + "\(config.mergeStrides.count) merge strides; TinyViT needs n >= 2 of each and n - 1 strides >= 1",
                           source: weights.source)
        }
        guard config.imageSize >= 1 else {
            throw .invalid(key: modulePath(prefix, PatchEmbed.key), reason: "config.imageSize \(config.imageSize) is not positive",
                           source: weights.source)
        }

        // ref: tiny_vit_sam.py TinyViT.__init__ (L484-490)
        let stemKey = modulePath(prefix, "\(PatchEmbed.key).seq.0.c.weight")
        let stemShape = try weights.requireShape(stemKey)
        if stemShape.count == 4, stemShape[1] != config.inChannels {
            throw weights.configMismatch(stemKey, "in_chans", weights: stemShape[1], config: config.inChannels,
                                         because: "shape \(stemShape)")
        }
        patchEmbed = try PatchEmbed(weights: weights, path: modulePath(prefix, PatchEmbed.key), inChannels: config.inChannels)
        try Self.check(weights, patchEmbed.conv2.path + ".c.weight", "embed_dims[0]", patchEmbed.embedDim, config.embedDims[0])
        // Every stride-s, 3x3, pad-1 conv maps a side n >= 1 to (n - 1) / s + 1 >= 1, so no stage is empty.
        var resolution = GridSize(height: patchEmbed.outputSize(config.imageSize), width: patchEmbed.outputSize(config.imageSize))

        // ref: tiny_vit_sam.py TinyViT.__init__ (L497-526)
        let layersPath = modulePath(prefix, "layers")
        let layerCount = NN.childCount(layersPath, in: weights)
        try Self.check(weights, layersPath, "the number of layers", layerCount, stageCount, because: "the layers.N keys")
        var dim = patchEmbed.embedDim
        var layers: [Layer] = []
        for index in 0..<stageCount {
            let layerPath = "\(layersPath).\(index)"
            let blocksPath = "\(layerPath).blocks"
            let depth = NN.childCount(blocksPath, in: weights)
            try Self.check(weights, blocksPath, "depths[\(index)]", depth, config.depths[index], because: "the blocks.N keys")
            try Self.check(weights, layerPath, "embed_dims[\(index)]", dim, config.embedDims[index], because: "the previous stage's output")
            let stride = index < stageCount - 1 ? config.mergeStrides[index] : nil
            let layer: Layer
            if index == 0 {
                let convLayer = try ConvLayer(weights: weights, path: layerPath, dim: dim, depth: depth,
                                              inputResolution: resolution, downsampleStride: stride)
                for block in convLayer.blocks {
                    try Self.check(weights, block.conv1.path + ".c.weight", "mbconv_expand_ratio",
                                   Double(block.hiddenDim) / Double(dim), config.mbconvExpandRatio,
                                   matches: block.hiddenDim == Int(Double(dim) * config.mbconvExpandRatio))
                }
                layer = .conv(convLayer)
            } else {
                let basicLayer = try BasicLayer(weights: weights, path: layerPath, dim: dim, depth: depth,
                                                inputResolution: resolution, downsampleStride: stride)
                for block in basicLayer.blocks {
                    let biasKey = block.attn.path + ".attention_biases"
                    try Self.check(weights, biasKey, "num_heads[\(index)]", block.attn.heads, config.numHeads[index])
                    try Self.check(weights, biasKey, "window_sizes[\(index)]", block.windowSize, config.windowSizes[index])
                    try Self.check(weights, block.mlp.fc1.path + ".weight", "mlp_ratio",
                                   Double(block.mlp.hiddenDim) / Double(dim), config.mlpRatio,
                                   matches: block.mlp.hiddenDim == Int(Double(dim) * config.mlpRatio))
                    try Self.check(weights, block.localConv.path + ".c.weight", "local_conv_size",
                                   block.localConv.kernelSize, config.localConvSize)
                }
                layer = .basic(basicLayer)
            }
            if let downsample = layer.downsample, index + 1 < stageCount {
                try Self.check(weights, downsample.conv1.path + ".c.weight", "embed_dims[\(index + 1)]",
                               downsample.outDim, config.embedDims[index + 1])
            }
            dim = layer.outputDim
            resolution = layer.outputResolution
            layers.append(layer)
        }
        self.layers = layers
        outputResolution = resolution

        neck = try Neck(weights: weights, path: modulePath(prefix, Neck.key), inChannels: dim)
        try Self.check(weights, neck.path + ".0.weight", "the neck width", neck.outChannels, config.neckDim)

        // The classification head (norm_head, head) is built upstream but never run by MobileSAM
        // (TinyViT.forward L618-619 are commented out). Take it so `finish()` does not report it.
        _ = try weights.takeIfPresent(modulePath(prefix, "norm_head.weight"), shape: [dim])
        _ = try weights.takeIfPresent(modulePath(prefix, "norm_head.bias"), shape: [dim])
        let headKey = modulePath(prefix, "head.weight")
        if let headShape = weights.shape(of: headKey) {
            let classes = headShape.first ?? 0
            _ = try weights.take(headKey, shape: [classes, dim])
            _ = try weights.take(modulePath(prefix, "head.bias"), shape: [classes])
        }
    }

    /// The input shape this encoder accepts, B free.
    package var inputShapeDescription: String {
        "[B, \(config.inChannels), \(config.imageSize), \(config.imageSize)]"
    }

    /// [B, neckDim, H, W] for a batch of `batch` images.
    package func outputShape(batch: Int) -> [Int] {
        [batch, neck.outChannels, outputResolution.height, outputResolution.width]
    }

    /// Encodes a batch of normalised, padded images [B, inChannels, imageSize, imageSize] into
    /// image embeddings [B, neckDim, imageSize/16, imageSize/16].
    package func callAsFunction(_ image: FloatTensor) throws(ImageEncoderError) -> FloatTensor {
        try callAsFunction(image, observer: nil)
    }

    /// Like `callAsFunction(_:)`, calling `observer` whenever a PyTorch module's forward would
    /// return, with that module's state-dict path and output — what forward hooks on every module
    /// would see, in the same order (children before parents). Observed: every Conv2d_BN (its
    /// output equals its `.bn`'s), GELU (`act1`, `act`, `seq.1` ...; PatchMerging's shared `act`
    /// twice), LayerNorm, Linear (`attn.qkv` rebuilt in PyTorch's interleaved layout), `attn`
    /// (per window, [windows, window², C], when the map is partitioned), `local_conv`, `mlp`,
    /// blocks, `downsample`s, `layers.i`, `patch_embed`, `neck.0`-`neck.3`, `neck`, and last the
    /// encoder's own `path` (= the result). Not observed: nn.Sequential `patch_embed.seq`, the
    /// folded-away `.bn`/`.c` children, drop_path/dropout identities. Paths carry the `path` prefix.
    package func callAsFunction(_ image: FloatTensor, observer: ModuleObserver?) throws(ImageEncoderError) -> FloatTensor {
        try self(image, observer: observer, tapping: []).embedding
    }

    /// The embedding, and the token outputs [B, H * W, C] of the stages `taps` names (`<path>.layers.i`).
    /// ref: sam-hq segment_anything/modeling/tiny_vit_sam.py TinyViT.forward_features — interm_embeddings
    package func callAsFunction(_ image: FloatTensor, observer: ModuleObserver?, tapping taps: Set<String>) throws(ImageEncoderError)
        -> (embedding: FloatTensor, tapped: [String: FloatTensor]) {
        let stagePaths = layers.indices.map { modulePath(path, "layers.\($0)") }
        try requireTappable(taps, among: stagePaths)
        var tapped: [String: FloatTensor] = [:]
        let shape = image.shape
        guard shape.count == 4, shape[0] >= 1, shape[1] == config.inChannels,
              shape[2] == config.imageSize, shape[3] == config.imageSize else {
            throw .imageShape(expected: inputShapeDescription, actual: shape)
        }
        // ref: tiny_vit_sam.py TinyViT.forward_features (L600-614)
        let stageObserver = StageObservation.observer(for: observer)
        var x = patchEmbed(image, observer: stageObserver)
        StageObservation.finished(patchEmbed.path, x, observer)
        for (layer, stagePath) in zip(layers, stagePaths) {
            x = layer(x, observer: stageObserver)
            StageObservation.finished(stagePath, x, observer)
            if taps.contains(stagePath) { tapped[stagePath] = x }
        }
        // L610-612: x.view(B, 64, 64, C).permute(0, 3, 1, 2) — the grid side is computed here, not hard-coded
        x = Kernels.tokensToNCHW(x, height: outputResolution.height, width: outputResolution.width)
        x = neck(x, observer: stageObserver)
        StageObservation.finished(neck.path, x, observer)
        observer?(path, x)
        return (x, tapped)
    }

    // MARK: - Config cross-checks

    private static func check<Value: Equatable & CustomStringConvertible>(
        _ weights: WeightStore, _ key: String, _ what: String, _ fromWeights: Value, _ fromConfig: Value,
        because detail: String? = nil
    ) throws(WeightError) {
        guard fromWeights != fromConfig else { return }
        let detail = detail ?? weights.shape(of: key).map { "shape \($0)" } ?? "the weights"
        throw weights.configMismatch(key, what, weights: fromWeights, config: fromConfig, because: detail)
    }

    private static func check(_ weights: WeightStore, _ key: String, _ what: String, _ fromWeights: Double,
                              _ fromConfig: Double, matches: Bool) throws(WeightError) {
        guard !matches else { return }
        let detail = weights.shape(of: key).map { "shape \($0)" } ?? "the weights"
        throw weights.configMismatch(key, what, weights: fromWeights, config: fromConfig, because: detail)
    }
}
