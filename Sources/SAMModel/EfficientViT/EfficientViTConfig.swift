/// EfficientViT-SAM's image encoder (MIT Han Lab `efficientsam`): an EfficientViTLargeBackbone, the
/// SAM neck and an output LayerNorm2d. Widths, depths, block types, expand ratios, the attention's
/// head dim and the neck's sizes are read from the weights and checked against this; the input
/// size, the neck's upsampling size, the eps values and the prompt frame are in no weight's shape.
/// ref: efficientsam/models/efficientvit/backbone.py EfficientViTLargeBackbone.__init__,
/// sam.py SamNeck.__init__, EfficientViTSamImageEncoder.__init__
package struct EfficientViTConfig: Sendable, Equatable {
    /// Side of the square encoder input (upstream's `image_size[1]`: 512 for L*, 1024 for XL*).
    package var imageSize: Int
    package var inChannels: Int
    /// One entry per backbone stage (`width_list`, `depth_list`, `block_list`, `expand_list`,
    /// `fewer_norm_list`).
    package var widths: [Int]
    package var depths: [Int]
    package var blockTypes: [EfficientViTBlockType]
    package var expandRatios: [Double]
    package var fewerNorm: [Bool]
    /// LiteMLA's per-head dim (`qkv_dim`).
    package var qkvDim: Int
    /// heads = Int(width / qkvDim * headsRatio).
    package var headsRatio: Double
    package var neck: EfficientViTNeckConfig
    /// Every BatchNorm2d's eps: 1e-6 after the zoo's `set_norm_eps` (PyTorch's default is 1e-5).
    package var batchNormEps: Double
    /// The output LayerNorm2d's eps (`image_encoder.norm`), 1e-6 after `set_norm_eps`.
    package var outputNormEps: Double
    /// LiteMLA's eps in the linear attention's division (ops.py LiteMLA `eps=1.0e-15`).
    package var attentionEps: Double
    /// How a photo becomes the input, and the prompt frame.
    package var imagePreprocessing: EfficientViTPreprocessing

    package init(imageSize: Int, inChannels: Int = 3, widths: [Int], depths: [Int], blockTypes: [EfficientViTBlockType],
                expandRatios: [Double], fewerNorm: [Bool], qkvDim: Int = 32, headsRatio: Double = 1, neck: EfficientViTNeckConfig,
                batchNormEps: Double = 1e-6, outputNormEps: Double = 1e-6, attentionEps: Double = 1e-15,
                imagePreprocessing: EfficientViTPreprocessing = .imageNet) {
        self.imageSize = imageSize
        self.inChannels = inChannels
        self.widths = widths
        self.depths = depths
        self.blockTypes = blockTypes
        self.expandRatios = expandRatios
        self.fewerNorm = fewerNorm
        self.qkvDim = qkvDim
        self.headsRatio = headsRatio
        self.neck = neck
        self.batchNormEps = batchNormEps
        self.outputNormEps = outputNormEps
        self.attentionEps = attentionEps
        self.imagePreprocessing = imagePreprocessing
    }

    /// Side of stage `stage`'s output: the stem and every later stage halve it (3x3, stride 2, padding 1).
    package func stageSide(_ stage: Int) -> Int {
        var side = imageSize
        for _ in 0...max(stage, 0) { side = (side - 1) / 2 + 1 }
        return side
    }

    /// LiteMLA heads of an attention stage of `width` channels.
    /// ref: ops.py LiteMLA.__init__ — heads = int(in_channels // dim * heads_ratio)
    package func heads(width: Int) -> Int {
        Int(Double(width / max(qkvDim, 1)) * headsRatio)
    }

    /// Mid channels of a block expanding `channels` by `ratio`. ref: ops.py MBConv/FusedMBConv/ResBlock
    /// `round(in_channels * expand_ratio)` (Python's round: half to even).
    package static func midChannels(_ channels: Int, _ ratio: Double) -> Int {
        Int((Double(channels) * ratio).rounded(.toNearestOrEven))
    }
}

/// The backbone's block kinds (`block_list` entries).
package enum EfficientViTBlockType: String, Codable, Sendable, CaseIterable {
    /// ResBlock: two 3x3 convs.
    case res
    /// FusedMBConv: a 3x3 expansion, then a 1x1 projection.
    case fmb
    /// MBConv: 1x1 expansion, 3x3 depthwise, 1x1 projection.
    case mb
    /// EfficientViTBlock with LiteMLA aggregating at 5x5.
    case att
    /// EfficientViTBlock with LiteMLA aggregating at 3x3.
    case att3 = "att@3"

    package var isAttention: Bool { self == .att || self == .att3 }

    /// LiteMLA's aggregation kernel sides (`scales`). ref: backbone.py — (3,) if "att@3" else (5,)
    package var attentionScales: [Int] { self == .att3 ? [3] : self == .att ? [5] : [] }

    /// The block a stage of this kind downsamples with. ref: backbone.py — "mb" unless the stage is "mb" or "fmb"
    package var downsampleType: EfficientViTBlockType { self == .fmb ? .fmb : self == .res || isAttention ? .mb : self }
}

/// The SAM neck (`SamNeck`, a DAGBlock): a 1x1 conv + BatchNorm per input stage, each upsampled
/// bicubically to `upsampleSize`, summed, `headDepth` residual middle blocks, a 1x1 output conv.
package struct EfficientViTNeckConfig: Sendable, Equatable {
    /// Backbone stages read, in upstream's `fid_list` order (L: 4, 3, 2; XL: 5, 4, 3).
    package var inputStages: [Int]
    package var headWidth: Int
    package var headDepth: Int
    package var expandRatio: Double
    /// The middle blocks' kind (`middle_op`): fmb for every published model; res and mb build too.
    package var middleOp: EfficientViTBlockType
    /// Channels of the image embedding (`out_dim`).
    package var outChannels: Int
    /// Side every input is upsampled to, and the embedding's (sam.py SamNeck: UpSampleLayer(size=(64, 64))).
    package var upsampleSize: Int

    package init(inputStages: [Int], headWidth: Int = 256, headDepth: Int, expandRatio: Double, middleOp: EfficientViTBlockType = .fmb,
                outChannels: Int = 256, upsampleSize: Int = 64) {
        self.inputStages = inputStages
        self.headWidth = headWidth
        self.headDepth = headDepth
        self.expandRatio = expandRatio
        self.middleOp = middleOp
        self.outChannels = outChannels
        self.upsampleSize = upsampleSize
    }
}

/// EfficientViTSam.transform and the predictor's two frames: the photo's longest side resized to
/// the encoder input (Pillow bilinear, skipped when it already is), ToTensor (÷255), normalised
/// with 0-1 statistics, zero-padded after normalising; prompts and masks in a `promptFrameSize`
/// frame (1024, upstream's `image_size[0]`).
/// ref: efficientsam/models/efficientvit/sam.py EfficientViTSam.transform, SamResize, SamPad, set_image
package struct EfficientViTPreprocessing: Sendable, Equatable {
    /// In 0-1 units.
    package var pixelMean: [Double]
    package var pixelStd: [Double]
    package var promptFrameSize: Int

    package init(pixelMean: [Double], pixelStd: [Double], promptFrameSize: Int) {
        self.pixelMean = pixelMean
        self.pixelStd = pixelStd
        self.promptFrameSize = promptFrameSize
    }

    /// ref: sam.py EfficientViTSam.__init__ transform — Normalize(mean=[123.675/255, 116.28/255, 103.53/255],
    /// std=[58.395/255, 57.12/255, 57.375/255]); prompt frame image_size[0] = 1024
    package static let imageNet = EfficientViTPreprocessing(pixelMean: [123.675 / 255, 116.28 / 255, 103.53 / 255],
                                                           pixelStd: [58.395 / 255, 57.12 / 255, 57.375 / 255],
                                                           promptFrameSize: 1024)
}
