/// A configuration's sizes, checked before anything is built or allocated from them. A config.json
/// or a `.samw`'s stored configuration is input: `imageEmbeddingSize` 2^31 would allocate its dense
/// positional encoding before any weight is compared with it, `maxPoints` Int.max overflows the
/// decoder's token range, a patch size of 0 divides by zero. Every bound leaves wide room around the
/// published models (SAM, MobileSAM: a 1024 input, a 64x64x256 embedding, 2 decoder layers of 8 heads).
package enum ConfigBounds {
    package static let imageSize = 1...4096
    package static let embeddingGridSize = 1...256
    package static let channels = 1...4096
    package static let hiddenWidth = 1...65_536
    package static let heads = 1...256
    package static let layers = 1...128
    package static let headLayers = 1...16
    package static let multimaskOutputs = 1...16
    package static let maxPoints = 1...65_536
    /// Elements of the dense positional encoding [C, g, g] built from the configuration (SAM's: 2^20).
    package static let densePositionalEncodingElements = 1 << 26
}

/// Collects "field value is not in range" lines.
package struct ConfigProblems {
    package private(set) var lines: [String] = []

    package init() {}

    package mutating func require(_ field: String, _ value: Int, in range: ClosedRange<Int>) {
        if !range.contains(value) { lines.append("\(field) \(value) is not in \(range.lowerBound)...\(range.upperBound)") }
    }

    package mutating func require(_ field: String, _ value: Double, in range: ClosedRange<Double>) {
        if !value.isFinite || !range.contains(value) { lines.append("\(field) \(value) is not in \(range.lowerBound)...\(range.upperBound)") }
    }

    package mutating func require(_ condition: Bool, _ line: @autoclosure () -> String) {
        if !condition { lines.append(line()) }
    }
}

extension SAMConfig {
    /// Every size out of bounds or inconsistent, one line each; empty when the configuration is usable.
    package var problems: [String] { problems(components: Set(Sam.components)) }

    /// The same, for a model holding only `components` (`Sam.components` names): widths are compared
    /// only between parts the model has, so an encoder-only file keeps the prompt encoder's defaults.
    package func problems(components: Set<String>) -> [String] {
        var check = ConfigProblems()
        let encoder = imageEncoder
        if let family {
            let runs: [String] = family.imageEncoderFamilies.map { $0.name }
            let message = "model family \(family.name) runs no image encoder of family '\(encoder.family)' (it runs "
                + runs.joined(separator: ", ") + ")"
            check.require(runs.contains(encoder.family), message)
        } else {
            check.require(false, "unknown model family '\(modelFamily)' (known: \(ModelFamilies.names.joined(separator: ", ")))")
        }
        check.require("imageEncoder.imageSize", encoder.imageSize, in: ConfigBounds.imageSize)
        check.require("imageEncoder.embeddingDim", encoder.embeddingDim, in: ConfigBounds.channels)
        encoder.base.checkBounds(&check)
        if check.lines.isEmpty {  // the grid is computed from sizes just checked (a patch size of 0 would divide by zero)
            check.require("imageEncoder embedding grid", encoder.embeddingGridSize, in: ConfigBounds.embeddingGridSize)
        }

        let prompt = promptEncoder
        check.require("promptEncoder.embedDim", prompt.embedDim, in: ConfigBounds.channels)
        check.require("promptEncoder.imageEmbeddingSize", prompt.imageEmbeddingSize, in: ConfigBounds.embeddingGridSize)
        check.require("promptEncoder.inputImageSize", prompt.inputImageSize, in: ConfigBounds.imageSize)
        check.require("promptEncoder.maskInChannels", prompt.maskInChannels, in: ConfigBounds.channels)
        if ConfigBounds.channels.contains(prompt.embedDim), ConfigBounds.embeddingGridSize.contains(prompt.imageEmbeddingSize) {
            let elements = prompt.embedDim * prompt.imageEmbeddingSize * prompt.imageEmbeddingSize
            check.require(elements <= ConfigBounds.densePositionalEncodingElements,
                          "the dense positional encoding [\(prompt.embedDim), \(prompt.imageEmbeddingSize), \(prompt.imageEmbeddingSize)] "
                            + "would hold \(elements) elements, more than \(ConfigBounds.densePositionalEncodingElements)")
        }

        let decoder = maskDecoder
        check.require("maskDecoder.transformerDim", decoder.transformerDim, in: ConfigBounds.channels)
        check.require("maskDecoder.depth", decoder.depth, in: ConfigBounds.layers)
        check.require("maskDecoder.numHeads", decoder.numHeads, in: ConfigBounds.heads)
        check.require("maskDecoder.mlpDim", decoder.mlpDim, in: ConfigBounds.hiddenWidth)
        check.require("maskDecoder.attentionDownsampleRate", decoder.attentionDownsampleRate, in: 1...max(1, decoder.transformerDim))
        check.require("maskDecoder.numMultimaskOutputs", decoder.numMultimaskOutputs, in: ConfigBounds.multimaskOutputs)
        check.require("maskDecoder.iouHeadDepth", decoder.iouHeadDepth, in: ConfigBounds.headLayers)
        check.require("maskDecoder.iouHeadHiddenDim", decoder.iouHeadHiddenDim, in: ConfigBounds.hiddenWidth)
        if let eps = decoder.transformerLayerNormEps { check.require("maskDecoder.transformerLayerNormEps", eps, in: 1e-12...0.1) }
        if decoder.attentionDownsampleRate >= 1, decoder.numHeads >= 1 {
            // ref: transformer.py Attention.__init__ — assert self.internal_dim % num_heads == 0
            let internalDim = decoder.transformerDim / decoder.attentionDownsampleRate
            check.require(decoder.transformerDim % decoder.attentionDownsampleRate == 0 && internalDim % decoder.numHeads == 0,
                          "maskDecoder: transformerDim \(decoder.transformerDim) / attentionDownsampleRate \(decoder.attentionDownsampleRate) "
                            + "does not split into \(decoder.numHeads) heads")
        }

        videoMode?.checkBounds(&check)

        if check.lines.isEmpty { consistency(&check, components: components) }

        check.require("maxPoints", maxPoints, in: ConfigBounds.maxPoints)
        check.require("minPoints", minPoints, in: 0...max(0, min(maxPoints, ConfigBounds.maxPoints.upperBound)))
        return check.lines
    }

    /// The parts agree with each other (checked once each is within its bounds): the prompt encoder's
    /// input and grid are the image encoder's (its patch size and strides give the grid), and one width
    /// runs from the image embedding through the prompt encoder to the decoder's transformer.
    /// ref: segment_anything/build_sam.py _build_sam — image_embedding_size = image_size // vit_patch_size,
    /// input_image_size = (image_size, image_size), prompt_embed_dim shared by the neck, the prompt
    /// encoder and the decoder's transformer; sam2/modeling/sam2_base.py SAM2Base._build_sam_heads.
    private func consistency(_ check: inout ConfigProblems, components: Set<String>) {
        let encoder = imageEncoder, prompt = promptEncoder
        // The pipeline resizes to the image encoder's input and scales prompts by the prompt encoder's,
        // whichever components the file holds: these two always agree (the encoder says its prompt frame).
        let frame = encoder.promptFrameSize == encoder.imageSize ? "input size" : "prompt frame"
        check.require(prompt.inputImageSize == encoder.promptFrameSize,
                      "promptEncoder.inputImageSize \(prompt.inputImageSize) is not the image encoder's \(frame) \(encoder.promptFrameSize)")
        check.require(prompt.imageEmbeddingSize == encoder.embeddingGridSize,
                      "promptEncoder.imageEmbeddingSize \(prompt.imageEmbeddingSize) does not fit the input size: the image encoder "
                        + "turns \(encoder.imageSize)x\(encoder.imageSize) into a \(encoder.embeddingGridSize)x\(encoder.embeddingGridSize) grid")
        let hasEncoder = components.contains(Sam.imageEncoderKey)
        let hasPrompt = components.contains("prompt_encoder"), hasDecoder = components.contains("mask_decoder")
        if hasEncoder && hasPrompt {
            check.require(encoder.embeddingDim == prompt.embedDim,
                          "imageEncoder embeddings have \(encoder.embeddingDim) channels, promptEncoder.embedDim is \(prompt.embedDim)")
        }
        if hasPrompt && hasDecoder {
            check.require(maskDecoder.transformerDim == prompt.embedDim,
                          "maskDecoder.transformerDim \(maskDecoder.transformerDim) is not promptEncoder.embedDim \(prompt.embedDim)")
        }
        if hasEncoder && hasDecoder && !hasPrompt {
            check.require(maskDecoder.transformerDim == encoder.embeddingDim,
                          "maskDecoder.transformerDim \(maskDecoder.transformerDim) is not the image embeddings' \(encoder.embeddingDim) channels")
        }
    }

    /// Throws naming `file` and every problem when the configuration is not usable (for a model
    /// holding `components`; all of them unless said).
    package func validate(file: String, components: Set<String> = Set(Sam.components)) throws(ConfigError) {
        let found = problems(components: components)
        guard found.isEmpty else {
            throw ConfigError(file: file, message: "configuration out of bounds: " + found.joined(separator: "; "))
        }
    }
}
