import SAMImport
import SAMModel

/// The architecture a converted model declares: a config file when there is one, else what the
/// weights' shapes and the ONNX graphs state (`SAMConfig.inferred`, pixel statistics an encoder graph
/// applies included), MobileSAM's values for the rest.
public enum ModelConfiguration {
    public static func resolve(explicitFile: String?, imported: ImportedWeights, maxPoints: Int?) throws(ConversionFailure) -> SAMConfig {
        let explicit = try explicitFile.map { (file) throws(ConversionFailure) in try ExplicitConfiguration(contentsOf: file) }
        return try resolve(explicit: explicit, imported: imported, maxPoints: maxPoints)
    }

    /// `resolve` with the config file already read (conversion reads it before the import, so a bad
    /// one is refused before the work).
    public static func resolve(explicit: ExplicitConfiguration?, imported: ImportedWeights,
                               maxPoints: Int?) throws(ConversionFailure) -> SAMConfig {
        var config: SAMConfig
        if let explicit {
            config = explicit.config
        } else {
            let facts = imported.facts
            let stages = facts.mergeStrides.keys.max().map { $0 + 1 } ?? 0
            let strides: [Int]? = stages > 0 && (0..<stages).allSatisfy { facts.mergeStrides[$0] != nil }
                ? (0..<stages).map { facts.mergeStrides[$0]! } : nil
            do {
                config = try SAMConfig.inferred(fromShapes: imported.tensors.mapValues(\.shape), imageSize: facts.imageSize,
                                                mergeStrides: strides, imageEmbeddingSize: facts.imageEmbeddingSize)
            } catch {
                let files = Set(imported.tensors.values.map(\.origin.file)).sorted()
                throw ConversionFailure((files.isEmpty ? "" : files.joined(separator: ", ") + ": ") + "\(error)")
            }
        }
        if let maxPoints { config.maxPoints = maxPoints }
        // A config.json written for image mode says nothing of video mode: its sizes come from the weights.
        let shapes = imported.tensors.mapValues(\.shape)
        if config.imageEncoder.family == HieraFamily.name, SAM2VideoConfig.present(inShapes: shapes) {
            // A transformers file states the sizes its weights were saved with: they must agree.
            try explicit?.checkVideo(against: imported)
            // The config's switches (or the published defaults), the sizes from the weights.
            config.videoMode = SAM2VideoConfig.inferred(fromShapes: shapes, base: config.videoMode ?? SAM2VideoConfig())
        }
        try InGraphPreprocessing.reconcile(imported.facts.inGraphNormalization, with: &config, configSource: explicit?.file)
        return config
    }
}
