/// Each image-encoder family's own bounds (see `ConfigBounds`): list lengths that agree with the
/// stage count, sizes that build, ratios that are finite.
extension TinyViTConfig {
    package func checkBounds(_ check: inout ConfigProblems) {
        let stages = embedDims.count
        check.require("imageEncoder stages (embedDims)", stages, in: 1...8)
        check.require("imageEncoder.inChannels", inChannels, in: 1...64)
        check.require(depths.count == stages && numHeads.count == stages && windowSizes.count == stages,
                      "imageEncoder: depths, numHeads and windowSizes need \(stages) entries each (one per stage)")
        check.require(mergeStrides.count == max(stages - 1, 0), "imageEncoder.mergeStrides needs \(max(stages - 1, 0)) entries")
        for (index, value) in embedDims.enumerated() { check.require("imageEncoder.embedDims[\(index)]", value, in: ConfigBounds.channels) }
        for (index, value) in depths.enumerated() { check.require("imageEncoder.depths[\(index)]", value, in: 0...64) }
        for (index, value) in numHeads.enumerated() { check.require("imageEncoder.numHeads[\(index)]", value, in: ConfigBounds.heads) }
        for (index, value) in windowSizes.enumerated() { check.require("imageEncoder.windowSizes[\(index)]", value, in: 1...256) }
        for (index, value) in mergeStrides.enumerated() { check.require("imageEncoder.mergeStrides[\(index)]", value, in: 1...4) }
        check.require("imageEncoder.mlpRatio", mlpRatio, in: 0.001...64)
        check.require("imageEncoder.mbconvExpandRatio", mbconvExpandRatio, in: 0.001...64)
        check.require("imageEncoder.localConvSize", localConvSize, in: 1...31)
        check.require("imageEncoder.neckDim", neckDim, in: ConfigBounds.channels)
    }
}

extension ViTConfig {
    package func checkBounds(_ check: inout ConfigProblems) {
        check.require("imageEncoder.patchSize", patchSize, in: 1...max(1, min(imageSize, 1024)))
        check.require("imageEncoder.inChannels", inChannels, in: 1...64)
        check.require("imageEncoder.embedDim", embedDim, in: ConfigBounds.channels)
        check.require("imageEncoder.depth", depth, in: ConfigBounds.layers)
        check.require("imageEncoder.numHeads", numHeads, in: ConfigBounds.heads)
        if numHeads >= 1 { check.require(embedDim % numHeads == 0, "imageEncoder: embedDim \(embedDim) does not split into \(numHeads) heads") }
        check.require("imageEncoder.mlpRatio", mlpRatio, in: 0.001...64)
        check.require("imageEncoder.neckDim", neckDim, in: ConfigBounds.channels)
        if patchSize >= 1 { check.require("imageEncoder.windowSize", windowSize, in: 0...max(0, imageSize / patchSize)) }
        check.require(globalAttentionIndexes.allSatisfy { (0..<max(depth, 0)).contains($0) },
                      "imageEncoder.globalAttentionIndexes \(globalAttentionIndexes) are not all blocks of 0..<\(depth)")
        check.require("imageEncoder.layerNormEps", layerNormEps, in: 1e-12...0.1)
    }
}
