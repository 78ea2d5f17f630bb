/// SAM 2's image encoder as the `sam2` configs build it: a Hiera trunk (hieradet.py), an FPN neck
/// (image_encoder.py FpnNeck) and what image mode adds once per image (the decoder's high-resolution
/// projections and `no_mem_embed`). Widths, depths and stage lengths are read from the weights and
/// checked against this; head counts, windows and global blocks are in no weight's shape.
/// ref: sam2/configs/sam2.1/sam2.1_hiera_{t,s,b+,l}.yaml; hieradet.py Hiera.__init__
package struct HieraConfig: Codable, Sendable, Equatable {
    package var imageSize: Int
    package var inChannels: Int
    /// Width of stage 1; each later stage doubles it (dim_mul 2.0).
    package var embedDim: Int
    /// Heads of stage 1; each later stage doubles them (head_mul 2.0).
    package var numHeads: Int
    /// Blocks per stage.
    package var stages: [Int]
    /// Blocks that attend over the whole grid (window 0).
    package var globalAttentionBlocks: [Int]
    /// Window side per stage. The first block of a stage still uses the previous stage's window
    /// (upstream's lag), pooled to half its side when the block pools its queries.
    package var windowSpec: [Int]
    /// Side (height, width) of the background position embedding, resized bicubically to the grid.
    package var positionEmbeddingSize: [Int]
    /// How many stage transitions pool the queries (q_pool); the first block of stages 2...q_pool+1.
    package var queryPoolStages: Int
    /// Pooling kernel and stride at those transitions (q_stride, square).
    package var queryStride: Int
    package var mlpRatio: Double
    /// The neck's width (d_model): the image embedding's channels.
    package var neckDim: Int
    /// Neck levels (0 = finest) that add the nearest-upsampled coarser level (fpn_top_down_levels).
    package var fpnTopDownLevels: [Int]
    /// Coarsest levels the image encoder drops (scalp): the embedding is the coarsest kept level.
    package var scalp: Int
    /// Image mode hands the decoder the two finest levels through `mask_decoder.conv_s0`/`conv_s1`
    /// (use_high_res_features_in_sam).
    package var highResolutionFeatures: Bool
    /// Image mode adds `no_mem_embed` to the embedding (directly_add_no_mem_embed).
    package var addNoMemoryEmbedding: Bool
    /// How photos become the input; nil (and absent from JSON) is SAM 2's (`ImagePreprocessing.sam2`).
    package var imagePreprocessing: ImagePreprocessing?

    package init(imageSize: Int = 1024, inChannels: Int = 3, embedDim: Int, numHeads: Int, stages: [Int],
                globalAttentionBlocks: [Int], windowSpec: [Int] = [8, 4, 14, 7], positionEmbeddingSize: [Int] = [7, 7],
                queryPoolStages: Int = 3, queryStride: Int = 2, mlpRatio: Double = 4, neckDim: Int = 256,
                fpnTopDownLevels: [Int] = [2, 3], scalp: Int = 1, highResolutionFeatures: Bool = true,
                addNoMemoryEmbedding: Bool = true, imagePreprocessing: ImagePreprocessing? = nil) {
        self.imageSize = imageSize
        self.inChannels = inChannels
        self.embedDim = embedDim
        self.numHeads = numHeads
        self.stages = stages
        self.globalAttentionBlocks = globalAttentionBlocks
        self.windowSpec = windowSpec
        self.positionEmbeddingSize = positionEmbeddingSize
        self.queryPoolStages = queryPoolStages
        self.queryStride = queryStride
        self.mlpRatio = mlpRatio
        self.neckDim = neckDim
        self.fpnTopDownLevels = fpnTopDownLevels
        self.scalp = scalp
        self.highResolutionFeatures = highResolutionFeatures
        self.addNoMemoryEmbedding = addNoMemoryEmbedding
        self.imagePreprocessing = imagePreprocessing
    }

    /// ref: sam2/configs/sam2.1/sam2.1_hiera_t.yaml (the same trunk as sam2_hiera_t.yaml)
    package static let tiny = HieraConfig(embedDim: 96, numHeads: 1, stages: [1, 2, 7, 2], globalAttentionBlocks: [5, 7, 9])
    /// ref: sam2.1_hiera_s.yaml
    package static let small = HieraConfig(embedDim: 96, numHeads: 1, stages: [1, 2, 11, 2], globalAttentionBlocks: [7, 10, 13])
    /// ref: sam2.1_hiera_b+.yaml (Hiera's defaults: stages, global blocks, 14x14 background)
    package static let basePlus = HieraConfig(embedDim: 112, numHeads: 2, stages: [2, 3, 16, 3], globalAttentionBlocks: [12, 16, 20],
                                             positionEmbeddingSize: [14, 14])
    /// ref: sam2.1_hiera_l.yaml
    package static let large = HieraConfig(embedDim: 144, numHeads: 2, stages: [2, 6, 36, 4], globalAttentionBlocks: [23, 33, 43],
                                          windowSpec: [8, 4, 16, 8])
    package static let published: [HieraConfig] = [.tiny, .small, .basePlus, .large]

    // MARK: Derived geometry (ref: hieradet.py Hiera.__init__)

    /// PatchEmbed: Conv2d kernel 7, stride 4, padding 3 (hieradet.py PatchEmbed defaults).
    package static let patchKernel = 7, patchStride = 4, patchPadding = 3
    /// nn.LayerNorm eps of every block (MultiScaleBlock: partial(nn.LayerNorm, eps=1e-6)).
    package static let layerNormEps: Float = 1e-6

    package var depth: Int { stages.reduce(0, +) }
    /// The last block of every stage (stage_ends).
    package var stageEnds: [Int] { stages.indices.map { stages[...$0].reduce(0, +) - 1 } }
    /// Blocks that pool their queries: the first of stages 2 ... queryPoolStages + 1.
    package var queryPoolBlocks: [Int] { Array(stageEnds.dropLast().map { $0 + 1 }.prefix(queryPoolStages)) }
    /// Side of the patch grid (stage 1's grid).
    package var patchGridSize: Int { imageSize / Self.patchStride }

    /// One block's geometry as Hiera.__init__ lays it out.
    package struct BlockLayout: Sendable, Equatable {
        package var dim: Int, dimOut: Int, heads: Int
        /// 0: global attention.
        package var window: Int
        /// The pooling stride when the block pools its queries.
        package var queryStride: Int?
    }

    /// ref: hieradet.py Hiera.__init__ — the window lags a block behind the stage change; dims
    /// and heads grow at the first block of every later stage.
    package var blockLayouts: [BlockLayout] {
        var layouts: [BlockLayout] = []
        var dim = embedDim, heads = numHeads, stage = 1
        let ends = stageEnds, pooling = queryPoolBlocks
        for index in 0..<depth {
            var dimOut = dim
            var window = windowSpec.indices.contains(stage - 1) ? windowSpec[stage - 1] : 0
            if globalAttentionBlocks.contains(index) { window = 0 }
            if ends.contains(index - 1) {
                dimOut = dim * 2
                heads *= 2
                stage += 1
            }
            layouts.append(BlockLayout(dim: dim, dimOut: dimOut, heads: heads, window: window,
                                       queryStride: pooling.contains(index) ? queryStride : nil))
            dim = dimOut
        }
        return layouts
    }

    /// Channels of each stage's output, finest first.
    package var stageDims: [Int] { stages.indices.map { embedDim << $0 } }
    /// Grid side of each stage's output, finest first.
    package var stageGridSizes: [Int] {
        var side = patchGridSize
        return stages.indices.map { stage in
            if stage > 0 && stage <= queryPoolStages { side /= queryStride }
            return side
        }
    }

    /// Neck levels kept after the scalp, finest first: the embedding is the last.
    package var keptLevels: Int { stages.count - scalp }

    /// Why this geometry cannot run, as upstream would fail on it (nil when it can): every
    /// pooling stage must halve an even grid, a pooling block's window must pool evenly and its
    /// windows must line up before and after pooling, and the neck's top-down levels must be twice
    /// the level above them.
    /// ref: hieradet.py MultiScaleBlock.forward (window_unpartition after pooling); image_encoder.py FpnNeck.forward
    package var geometryProblem: String? {
        var side = patchGridSize
        guard side >= 1, imageSize % Self.patchStride == 0 else { return "image size \(imageSize) is not a multiple of 4" }
        for (index, layout) in blockLayouts.enumerated() {
            guard let stride = layout.queryStride else { continue }
            guard side % stride == 0 else { return "block \(index) pools a \(side)x\(side) grid by \(stride)" }
            if layout.window > 0 {
                guard layout.window % stride == 0 else { return "block \(index) pools its \(layout.window)-wide windows by \(stride)" }
                let before = (side + layout.window - 1) / layout.window
                let pooled = layout.window / stride, after = (side / stride + pooled - 1) / pooled
                guard before == after else {
                    return "block \(index): \(side)x\(side) in \(layout.window)-wide windows does not pool to \(side / stride)x\(side / stride) "
                        + "in \(pooled)-wide windows"
                }
            }
            side /= stride
        }
        let grids = stageGridSizes
        for level in fpnTopDownLevels where level + 1 < grids.count && level >= 0 {
            guard grids[level] == 2 * grids[level + 1] else {
                return "neck level \(level) (\(grids[level])x\(grids[level])) is not twice level \(level + 1) (\(grids[level + 1]))"
            }
        }
        return nil
    }
}
