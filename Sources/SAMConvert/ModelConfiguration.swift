import SAMImport
import SAMModel

/// The architecture a converted model declares: a config file when there is one, else what the
/// weights' shapes and the ONNX graphs state (`SAMConfig.inferred`), MobileSAM's values for the rest.
public enum ModelConfiguration {
    public static func resolve(explicitFile: String?, imported: ImportedWeights, maxPoints: Int?) throws(ConversionFailure) -> SAMConfig {
        var config: SAMConfig
        if let explicitFile {
            do { config = try SAMConfig(contentsOf: explicitFile) } catch { throw ConversionFailure("\(error)") }
        } else {
            let facts = imported.facts
            let stages = facts.mergeStrides.keys.max().map { $0 + 1 } ?? 0
            let strides: [Int]? = stages > 0 && (0..<stages).allSatisfy { facts.mergeStrides[$0] != nil }
                ? (0..<stages).map { facts.mergeStrides[$0]! } : nil
            config = SAMConfig.inferred(fromShapes: imported.tensors.mapValues(\.tensor.shape), imageSize: facts.imageSize,
                                        mergeStrides: strides, imageEmbeddingSize: facts.imageEmbeddingSize)
        }
        if let maxPoints { config.maxPoints = maxPoints }
        return config
    }
}
