/// The original SAM image encoder (`segment_anything` ImageEncoderViT) as build_sam.py builds it:
/// B 768/12/12 global [2,5,8,11], L 1024/24/16 global [5,11,17,23], H 1280/32/16 global [7,15,23,31].
/// Widths, depths, MLP ratio and the neck width are read from the weights and checked against
/// this; the head count, window size and which blocks attend globally are in no weight's shape
/// (head counts are, indirectly, through `rel_pos_*` [2*size-1, head_dim]).
/// ref: segment_anything/build_sam.py _build_sam, image_encoder.py ImageEncoderViT.__init__
package struct ViTConfig: Codable, Sendable, Equatable {
    package var imageSize: Int
    package var patchSize: Int
    package var inChannels: Int
    package var embedDim: Int
    package var depth: Int
    package var numHeads: Int
    package var mlpRatio: Double
    /// The neck's output channels (`out_chans`, the prompt/decoder width).
    package var neckDim: Int
    /// Side of the window of non-global blocks (0: every block global).
    package var windowSize: Int
    package var globalAttentionIndexes: [Int]
    package var useRelativePositions: Bool
    /// build_sam.py's `partial(torch.nn.LayerNorm, eps=1e-6)`.
    package var layerNormEps: Double
    /// How photos become the input; nil (and absent from JSON) is SAM's (`ImagePreprocessing.sam`).
    package var imagePreprocessing: ImagePreprocessing?

    package init(imageSize: Int = 1024, patchSize: Int = 16, inChannels: Int = 3, embedDim: Int, depth: Int, numHeads: Int,
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

    package static let vitB = ViTConfig(embedDim: 768, depth: 12, numHeads: 12, globalAttentionIndexes: [2, 5, 8, 11])
    package static let vitL = ViTConfig(embedDim: 1024, depth: 24, numHeads: 16, globalAttentionIndexes: [5, 11, 17, 23])
    package static let vitH = ViTConfig(embedDim: 1280, depth: 32, numHeads: 16, globalAttentionIndexes: [7, 15, 23, 31])

    /// Side of the token grid (and of the image embedding).
    package var gridSize: Int { imageSize / patchSize }
}
