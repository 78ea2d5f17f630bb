import SAMKernels
import SAMTensor

/// EfficientViT-SAM's image encoder (`EfficientViTSamImageEncoder`): the EfficientViTLargeBackbone's
/// stages, the SAM neck on three of them, and a LayerNorm2d over the channels.
/// [B, 3, S, S] normalised, padded image -> [B, 256, 64, 64] image embeddings.
package struct EfficientViTImageEncoder: ImageEncoder {
    package let path: String
    package let config: EfficientViTConfig
    package let stages: [EfficientViT.BackboneStage]
    package let neck: EfficientViT.SamNeck
    /// `norm`: EfficientViT's LayerNorm2d (the same arithmetic as SAM's), eps 1e-6 after set_norm_eps.
    package let norm: NN.LayerNorm2d

    /// ref: efficientsam/models/efficientvit/sam.py EfficientViTSamImageEncoder.__init__
    package init(weights: WeightStore, prefix: String = Sam.imageEncoderKey, config: EfficientViTConfig) throws(WeightError) {
        path = prefix
        self.config = config
        // The stages index the per-stage lists: a configuration that skipped validation is refused, not trapped on.
        var problems = ConfigProblems()
        config.checkBounds(&problems)
        guard problems.lines.isEmpty else {
            throw .invalid(key: prefix, reason: "configuration out of bounds: " + problems.lines.joined(separator: "; "), source: weights.source)
        }
        let stagesPath = modulePath(prefix, "backbone.stages")
        try NN.requireConsistent(NN.childCount(stagesPath, in: weights), config.widths.count, field: "widths (stages)", key: stagesPath,
                                 source: weights.source)
        var stages: [EfficientViT.BackboneStage] = []
        var inChannels = config.inChannels
        for index in config.widths.indices {
            stages.append(try EfficientViT.BackboneStage(weights: weights, path: "\(stagesPath).\(index)", index: index,
                                                         inChannels: inChannels, config: config))
            inChannels = config.widths[index]
        }
        self.stages = stages
        neck = try EfficientViT.SamNeck(weights: weights, path: modulePath(prefix, "neck"), stageWidths: config.widths, config: config)
        norm = try NN.LayerNorm2d(weights: weights, path: modulePath(prefix, "norm"), channels: neck.outChannels,
                                  eps: Float(config.outputNormEps))
    }

    package var inputShapeDescription: String { "[B, \(config.inChannels), \(config.imageSize), \(config.imageSize)]" }

    /// ref: sam.py EfficientViTSamImageEncoder.forward; backbone.py EfficientViTLargeBackbone.forward
    package func features(_ image: FloatTensor, observer: ModuleObserver?) throws(ImageEncoderError) -> ImageFeatures {
        let shape = image.shape
        guard shape.count == 4, shape[0] >= 1, shape[1] == config.inChannels, shape[2] == config.imageSize,
              shape[3] == config.imageSize else {
            throw .imageShape(expected: inputShapeDescription, actual: shape)
        }
        // The backbone's output dict, by stage: kept only for the stages the neck reads.
        let read = Set(config.neck.inputStages)
        var outputs: [FloatTensor] = []
        var x = image
        let stageObserver = StageObservation.observer(for: observer)
        for (index, stage) in stages.enumerated() {
            x = stage(x, observer: stageObserver)
            StageObservation.finished(stage.path, x, observer)
            outputs.append(read.contains(index) ? x : FloatTensor(zeros: [0]))
        }
        var y = neck(stages: outputs, observer: stageObserver)
        norm(&y, observer: stageObserver)
        StageObservation.finished(neck.path, y, observer)
        observer?(path, y)
        return ImageFeatures(embedding: y)
    }
}
