/// The original SAM image encoder (`segment_anything` ImageEncoderViT) as build_sam.py builds it:
/// B 768/12/12 global [2,5,8,11], L 1024/24/16 global [5,11,17,23], H 1280/32/16 global [7,15,23,31].
/// Widths, depths, MLP ratio and the neck width are read from the weights and checked against
/// this; the head count, window size and which blocks attend globally are in no weight's shape
/// (head counts are, indirectly, through `rel_pos_*` [2*size-1, head_dim]).
/// ref: segment_anything/build_sam.py _build_sam, image_encoder.py ImageEncoderViT.__init__
public struct ViTConfig: Codable, Sendable, Equatable {
    public var imageSize: Int
    public var patchSize: Int
    public var inChannels: Int
    public var embedDim: Int
    public var depth: Int
    public var numHeads: Int
    public var mlpRatio: Double
    /// The neck's output channels (`out_chans`, the prompt/decoder width).
    public var neckDim: Int
    /// Side of the window of non-global blocks (0: every block global).
    public var windowSize: Int
    public var globalAttentionIndexes: [Int]
    public var useRelativePositions: Bool
    /// build_sam.py's `partial(torch.nn.LayerNorm, eps=1e-6)`.
    public var layerNormEps: Double
    /// How photos become the input; nil (and absent from JSON) is SAM's (`ImagePreprocessing.sam`).
    public var imagePreprocessing: ImagePreprocessing?

    public init(imageSize: Int = 1024, patchSize: Int = 16, inChannels: Int = 3, embedDim: Int, depth: Int, numHeads: Int,
                mlpRatio: Double = 4, neckDim: Int = 256, windowSize: Int = 14, globalAttentionIndexes: [Int],
                useRelativePositions: Bool = true, layerNormEps: Double = 1e-6, imagePreprocessing: ImagePreprocessing? = nil) {
        self.imageSize = imageSize
        self.patchSize = patchSize
        self.inChannels = inChannels
        self.embedDim = embedDim
        self.depth = depth
        self.numHeads = numHeads
        self.mlpRatio = mlpRatio
        self.neckDim = neckDim
        self.windowSize = windowSize
        self.globalAttentionIndexes = globalAttentionIndexes
        self.useRelativePositions = useRelativePositions
        self.layerNormEps = layerNormEps
        self.imagePreprocessing = imagePreprocessing
    }

    public static let vitB = ViTConfig(embedDim: 768, depth: 12, numHeads: 12, globalAttentionIndexes: [2, 5, 8, 11])
    public static let vitL = ViTConfig(embedDim: 1024, depth: 24, numHeads: 16, globalAttentionIndexes: [5, 11, 17, 23])
    public static let vitH = ViTConfig(embedDim: 1280, depth: 32, numHeads: 16, globalAttentionIndexes: [7, 15, 23, 31])

    /// Side of the token grid (and of the image embedding).
    public var gridSize: Int { imageSize / patchSize }
}
