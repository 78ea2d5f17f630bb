import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMModel

/// Hiera's block layout against what sam2's `Hiera.__init__` builds, and SAM 2's single-mask rule.
@Suite("Hiera layout and SAM 2's single-mask rule")
struct HieraTests {
    /// Read from the sam2 package (1.1.0): `[b.window_size for b in trunk.blocks]`, `trunk.q_pool_blocks`,
    /// `[b.attn.num_heads for b in trunk.blocks]` at each stage end, `[b.dim_out ...]` likewise.
    static let upstream: [(config: HieraConfig, windows: [Int], pooling: [Int], heads: [Int], dims: [Int])] = [
        (.tiny, [8, 8, 4, 4, 14, 0, 14, 0, 14, 0, 14, 7], [1, 3, 10], [1, 2, 4, 8], [96, 192, 384, 768]),
        (.small, [8, 8, 4, 4, 14, 14, 14, 0, 14, 14, 0, 14, 14, 0, 14, 7], [1, 3, 14], [1, 2, 4, 8], [96, 192, 384, 768]),
        (.basePlus, [8, 8, 8, 4, 4, 4] + [14, 14, 14, 14, 14, 14, 0, 14, 14, 14, 0, 14, 14, 14, 0] + [14, 7, 7],
         [2, 5, 21], [2, 4, 8, 16], [112, 224, 448, 896]),
        (.large, [8, 8, 8, 4, 4, 4, 4, 4, 4] + [16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 0] + [16, 16, 16, 16, 16, 16, 16, 16, 16, 0]
         + [16, 16, 16, 16, 16, 16, 16, 16, 16, 0] + [16, 8, 8, 8], [2, 8, 44], [2, 4, 8, 16], [144, 288, 576, 1152]),
    ]

    @Test("block windows, query pooling, heads and widths are upstream's", arguments: 0..<4)
    func layouts(index: Int) {
        let (config, windows, pooling, heads, dims) = Self.upstream[index]
        let layouts = config.blockLayouts
        #expect(layouts.map(\.window) == windows)
        #expect(config.queryPoolBlocks == pooling)
        #expect(layouts.indices.filter { layouts[$0].queryStride != nil } == pooling)
        #expect(config.stageEnds.map { layouts[$0].heads } == heads)
        #expect(config.stageEnds.map { layouts[$0].dimOut } == dims)
        #expect(config.stageDims == dims)
        #expect(config.stageGridSizes == [256, 128, 64, 32])
        #expect(config.embeddingGridSize == 64)
        #expect(config.featureShapes == [[1, 256, 64, 64], [1, 32, 256, 256], [1, 64, 128, 128]])
    }

    @Test("single-mask output keeps a stable mask 0 and otherwise takes the best multimask output")
    func stabilityRule() throws {
        // Mask 0 over 100 pixels: `above` logits at 1.0, `unsure` at 0.0 (within +-delta), the rest -1.
        func prediction(above: Int, unsure: Int, iou: [Float]) -> MaskPrediction {
            var plane = [Float](repeating: -1, count: 100)
            for i in 0..<above { plane[i] = 1 }
            for i in above..<(above + unsure) { plane[i] = 0 }
            return MaskPrediction(masks: FloatTensor(shape: [1, 4, 10, 10], data: plane + [Float](repeating: 0.5, count: 300)),
                                  iou: FloatTensor(shape: [1, 4], data: iou))
        }
        let rule = SAM2SingleMaskRule(options: SAM2DecoderOptions())
        // 49 / 50 = 0.98: stable (>= threshold), mask 0 whatever the scores.
        #expect(rule.index(prediction(above: 49, unsure: 1, iou: [0.1, 0.9, 0.8, 0.7])) == 0)
        // 48 / 50 = 0.96: unstable, the best of 1...3 by IoU; ties go to the first.
        #expect(rule.index(prediction(above: 48, unsure: 2, iou: [0.9, 0.2, 0.7, 0.7])) == 2)
        // Nothing above -delta: stability 1 by definition.
        #expect(rule.index(prediction(above: 0, unsure: 0, iou: [0.1, 0.9, 0.8, 0.7])) == 0)
        // Without the dynamic fallback, mask 0 always.
        var options = SAM2DecoderOptions()
        options.dynamicMultimaskViaStability = false
        #expect(SAM2SingleMaskRule(options: options).index(prediction(above: 1, unsure: 99, iou: [0, 1, 1, 1])) == 0)
    }

    @Test("selecting masks keeps their scores and clamps the logits")
    func selecting() {
        let prediction = MaskPrediction(masks: FloatTensor(shape: [1, 3, 1, 2], data: [-40, 1, 2, 50, 3, -3]),
                                        iou: FloatTensor(shape: [1, 3], data: [0.1, 0.2, 0.3]))
        let selected = prediction.selecting([2, 1], clampedTo: -32...32)
        #expect(selected.masks == FloatTensor(shape: [1, 2, 1, 2], data: [3, -3, 2, 32]))
        #expect(selected.iou.data == [0.3, 0.2])
    }
}

/// The published models recognised from their shapes alone.
@Suite("Hiera from shapes")
struct HieraInferenceTests {
    /// The trunk keys inference reads, for a configuration (what a checkpoint of it holds).
    static func shapes(_ config: HieraConfig) -> [String: [Int]] {
        var shapes: [String: [Int]] = [
            "image_encoder.trunk.patch_embed.proj.weight": [config.embedDim, 3, 7, 7],
            "image_encoder.trunk.pos_embed": [1, config.embedDim] + config.positionEmbeddingSize,
            "image_encoder.trunk.pos_embed_window": [1, config.embedDim, config.windowSpec[0], config.windowSpec[0]],
            "image_encoder.neck.convs.0.conv.weight": [256, config.stageDims.last!, 1, 1],
            "mask_decoder.conv_s0.weight": [32, 256, 1, 1], "no_mem_embed": [1, 1, 256],
        ]
        for (index, layout) in config.blockLayouts.enumerated() {
            shapes["image_encoder.trunk.blocks.\(index).mlp.layers.0.weight"] = [4 * layout.dimOut, layout.dimOut]
            if layout.dim != layout.dimOut { shapes["image_encoder.trunk.blocks.\(index).proj.weight"] = [layout.dimOut, layout.dim] }
        }
        return shapes
    }

    @Test("tiny, small, base_plus and large are recognised, whatever the base", arguments: 0..<4)
    func published(index: Int) throws {
        let expected = HieraConfig.published[index]
        for base in [SAMConfig.mobileSAM, .sam2(.tiny), .sam2(.large)] {
            let inferred = try SAMConfig.inferred(fromShapes: Self.shapes(expected), base: base)
            #expect(inferred.imageEncoder.as(HieraConfig.self) == expected, "base \(base.imageEncoder.summary)")
            #expect(inferred.promptEncoder.imageEmbeddingSize == 64 && inferred.maskDecoder.familyOptions[SAM2DecoderOptions.self] != nil)
        }
    }

    @Test("a decoder with the object-score token but not its head keeps the model's head kind")
    func objectScoreHeadDropped() throws {
        var shapes = Self.shapes(.tiny)
        shapes["mask_decoder.iou_token.weight"] = [1, 256]
        #expect(try SAMConfig.inferred(fromShapes: shapes).maskDecoder.familyOptions[SAM2DecoderOptions.self]?.objectScoreHead == SAM2DecoderOptions.ObjectScoreHead.none)
        shapes["mask_decoder.obj_score_token.weight"] = [1, 256]
        #expect(try SAMConfig.inferred(fromShapes: shapes).maskDecoder.familyOptions[SAM2DecoderOptions.self]?.objectScoreHead == .mlp)
        shapes["mask_decoder.pred_obj_score_head.weight"] = [1, 256]
        #expect(try SAMConfig.inferred(fromShapes: shapes).maskDecoder.familyOptions[SAM2DecoderOptions.self]?.objectScoreHead == .linear)
    }
}

/// Geometry upstream cannot run is refused when the model is built, not met by a crash.
@Suite("Hiera geometry")
struct HieraGeometryTests {
    @Test("the published layouts and the tiny test set run; odd grids, odd pooled windows and an unpooled last stage do not")
    func problems() {
        #expect(HieraConfig.published.allSatisfy { $0.geometryProblem == nil })
        var config = HieraConfig(imageSize: 96, embedDim: 8, numHeads: 1, stages: [1, 2, 3, 2], globalAttentionBlocks: [4],
                                 windowSpec: [8, 4, 4, 2], positionEmbeddingSize: [5, 5])
        #expect(config.geometryProblem == nil)
        config.imageSize = 100  // 25x25 patches: the first pooling halves an odd grid
        #expect(config.geometryProblem?.contains("pools a 25x25 grid") == true)
        config.imageSize = 96
        config.windowSpec = [8, 3, 4, 2]  // block 3 pools 3-wide windows
        #expect(config.geometryProblem?.contains("3-wide windows") == true)
        config.windowSpec = [8, 4, 4, 2]
        config.imageSize = 1056  // 264 -> 132 -> 66: 66 in 4-wide windows is 17, 33 in 2-wide windows 17, fine
        #expect(config.geometryProblem == nil)
        config.windowSpec = [8, 4, 12, 2]  // block 6 (lagging window 12): 66 in 12 is 6 windows, 33 in 6 is 6: fine
        #expect(config.geometryProblem == nil)
        config.windowSpec = [8, 4, 4, 2]
        config.imageSize = 96
        config.queryPoolStages = 2  // the last stage keeps stage 3's grid: the neck cannot fuse it in top-down
        #expect(config.geometryProblem?.contains("neck level 2") == true)
    }
}
