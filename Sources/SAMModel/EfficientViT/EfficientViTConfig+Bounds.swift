/// EfficientViT's own bounds (see `ConfigBounds`): one entry per stage in every list, sizes that
/// build, ratios that are finite, a neck on stages that exist, no block upstream cannot build.
extension EfficientViTConfig {
    package func checkBounds(_ check: inout ConfigProblems) {
        let stages = widths.count
        check.require("imageEncoder stages (widths)", stages, in: 1...8)
        check.require("imageEncoder.inChannels", inChannels, in: 1...64)
        check.require(depths.count == stages && blockTypes.count == stages && expandRatios.count == stages && fewerNorm.count == stages,
                      "imageEncoder: depths, blockTypes, expandRatios and fewerNorm need \(stages) entries each (one per stage)")
        for (index, value) in widths.enumerated() { check.require("imageEncoder.widths[\(index)]", value, in: ConfigBounds.channels) }
        for (index, value) in depths.enumerated() { check.require("imageEncoder.depths[\(index)]", value, in: 0...64) }
        for (index, value) in expandRatios.enumerated() { check.require("imageEncoder.expandRatios[\(index)]", value, in: 0.001...64) }
        // ref: backbone.py build_local_block raises for anything but res / fmb / mb in stage 0.
        check.require(blockTypes.first.map { !$0.isAttention } ?? true, "imageEncoder.blockTypes[0] cannot be an attention stage")
        check.require("imageEncoder.qkvDim", qkvDim, in: 1...1024)
        check.require("imageEncoder.headsRatio", headsRatio, in: 0.001...64)
        for (index, type) in blockTypes.enumerated() where type.isAttention && index < widths.count && qkvDim >= 1 {
            check.require(heads(width: widths[index]) >= 1,
                          "imageEncoder: attention stage \(index) of width \(widths[index]) has no head of qkvDim \(qkvDim)")
        }
        check.require("imageEncoder.neck.headWidth", neck.headWidth, in: ConfigBounds.channels)
        check.require("imageEncoder.neck.headDepth", neck.headDepth, in: 0...64)
        check.require("imageEncoder.neck.expandRatio", neck.expandRatio, in: 0.001...64)
        check.require("imageEncoder.neck.outChannels", neck.outChannels, in: ConfigBounds.channels)
        check.require("imageEncoder.neck.upsampleSize", neck.upsampleSize, in: ConfigBounds.embeddingGridSize)
        check.require(!neck.inputStages.isEmpty && neck.inputStages.allSatisfy { (0..<stages).contains($0) },
                      "imageEncoder.neck.inputStages \(neck.inputStages) are not all stages of 0..<\(stages)")
        check.require(!neck.middleOp.isAttention, "imageEncoder.neck.middleOp cannot be an attention block")
        check.require("imageEncoder.batchNormEps", batchNormEps, in: 1e-12...0.1)
        check.require("imageEncoder.outputNorm.eps", outputNormEps, in: 1e-12...0.1)
        check.require("imageEncoder.attention.eps", attentionEps, in: 0...0.1)
        check.require("imagePreprocessing.promptFrameSize", imagePreprocessing.promptFrameSize, in: ConfigBounds.imageSize)
    }
}
