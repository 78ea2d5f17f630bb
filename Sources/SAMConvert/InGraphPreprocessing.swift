import SAMImport
import SAMModel

/// An encoder export that normalises pixels in its graph (samexporter's) states the statistics the
/// model was exported with. The runtime normalises the image itself before its encoder, so those
/// constants become the configuration's preprocessing: checked against a config file's, or, when the
/// configuration is inferred from the weights, recorded in it.
enum InGraphPreprocessing {
    /// `configSource` names the configuration that was given (a config file); nil when it was
    /// inferred from the weights, which takes the graph's statistics.
    static func reconcile(_ normalization: InGraphNormalization?, with config: inout SAMConfig,
                          configSource: String?) throws(ConversionFailure) {
        guard let normalization else { return }
        let configured = config.imageEncoder.preprocessing
        let file = normalization.file
        guard let mean = normalization.pixelMean, let std = normalization.pixelStd else {
            let found = normalization.meanTensor.map { "a pixel mean ('\($0)') but no std" }
                ?? "a pixel std ('\(normalization.stdTensor ?? "?")') but no mean"
            throw ConversionFailure("\(file): the graph normalises the image with \(found); the model's preprocessing "
                                    + "is (x - \(configured.pixelMean)) / \(configured.pixelStd)")
        }
        // The graph holds float32 constants: they agree when the configured values round to them.
        func same(_ stored: [Double], _ wanted: [Double]) -> Bool {
            stored.count == wanted.count && zip(stored, wanted).allSatisfy { Float($0) == Float($1) }
        }
        if same(mean, configured.pixelMean) && same(std, configured.pixelStd) { return }
        if let configSource {
            let (tensor, what, stored, wanted) = same(mean, configured.pixelMean)
                ? (normalization.stdTensor, "divides by pixel std", std, configured.pixelStd)
                : (normalization.meanTensor, "subtracts pixel mean", mean, configured.pixelMean)
            throw ConversionFailure("\(file): tensor '\(tensor ?? "?")': the graph \(what) \(stored), "
                                    + "the configuration (\(configSource)) \(wanted)")
        }
        config.imageEncoder.preprocessing = ImagePreprocessing(resize: configured.resize, pixelMean: mean, pixelStd: std)
    }
}
