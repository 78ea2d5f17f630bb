import Foundation
import SAMConvert
import SAMFiles
import SAMFormats
import SAMImport
import SAMModel
import SAMModelFile
import SAMTensor

/// What samconvert prints when it has written the model.
struct ConversionSummary {
    let result: ConversionResult
    let output: String
    let seconds: Double

    var imported: ImportedWeights { result.imported }
    var metadata: ModelFileMetadata { result.metadata }
    var tensors: [String: StoredTensor] { result.storedTensors }

    func print() {
        let config = metadata.config
        let bytes = tensors.values.reduce(0) { $0 + $1.byteCount }
        emit("wrote \(output) in \(String(format: "%.2f", seconds)) s")
        emit("  model family: \(metadata.modelFamily)")
        emit("  components: \(metadata.components.joined(separator: ", "))")
        emit("  tensors: \(tensors.count) (\(metadata.weightDType)), \(bytes) bytes of weights")
        if metadata.components.contains(Sam.imageEncoderKey) {
            emit("  image encoder: \(config.imageEncoder.summary)")
        }
        if metadata.components.contains("prompt_encoder") {
            emit("  prompt encoder: dim \(config.promptEncoder.embedDim), grid \(config.promptEncoder.imageEmbeddingSize), "
                        + "input \(config.promptEncoder.inputImageSize), dense PE \(imported.denseImagePE != nil ? "supplied" : "from weights")")
        }
        if metadata.components.contains("mask_decoder") {
            let decoder = config.maskDecoder
            emit("  mask decoder: dim \(decoder.transformerDim), depth \(decoder.depth), heads \(decoder.numHeads), mlp \(decoder.mlpDim), "
                        + "\(decoder.numMultimaskOutputs + 1) masks"
                        + decoder.familyOptions.summaries(weightNames: Array(tensors.keys)).map { "; " + $0 }.joined())
        }
        if let video = config.videoMode, metadata.components.contains(Sam.videoKey) {
            emit("  video: memory attention \(video.memoryAttentionLayers) layers, memory width \(video.memoryDim), "
                 + "\(video.numMaskmem) memories, object pointers \(video.useObjectPointers ? "on" : "off")"
                 + (video.projectTemporalEncodingInPointers ? " with projected temporal encodings (SAM 2.1)" : " (SAM 2.0)"))
        }
        let videoOnly = imported.dropped.filter { $0.rule == .dropVideoOnly } + imported.ignored.filter { $0.rule == .dropVideoOnly }
        if !videoOnly.isEmpty {
            emit("  left out: \(videoOnly.count) video-only tensors (memory attention and encoder, object pointers); "
                        + "image mode does not run them")
        }
        emit("  points: \(config.minPoints)...\(config.maxPoints) per prompt")
        for source in metadata.provenance.sources {
            guard let stored = source.weightsStoredAs, stored != ["f32"] else { continue }
            emit("  \(source.path): weights stored as \(stored.joined(separator: ", "))"
                        + (stored.contains { $0.contains("(") } ? "; quantized weights were dequantized" : ""))
        }
        if let normalization = imported.facts.inGraphNormalization {
            Swift.print("  \(normalization.file): normalises pixels in its graph, as the model does: mean "
                        + "\(normalization.pixelMean ?? []), std \(normalization.pixelStd ?? [])")
        }
        if let worst = imported.worstAgreement {
            emit("  inputs agreed on \(imported.agreements.count) shared tensors; largest difference \(worst.maxAbsDifference) (\(worst.tensor))")
        }
        for weight in result.nonFinite {
            emit("  written with NaN or infinity (--allow-nonfinite): " + weight.description)
        }
        if !imported.unmapped.isEmpty {
            emit("  left out (--allow-unmapped): " + imported.unmapped.map(\.description).joined(separator: "; "))
        }
    }

    /// Names from the inputs appear in these lines: printed escaped (`TerminalText`).
    private func emit(_ line: String) { Swift.print(TerminalText.escaped(line)) }
}
