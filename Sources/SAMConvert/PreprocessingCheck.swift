import SAMImport
import SAMModel

/// An encoder export that normalises pixels in its graph (samexporter's) must use the statistics the
/// converted model applies before its encoder (`config.imageEncoder.preprocessing`): the runtime
/// normalises the image itself, so the graph's constants are not carried over, only checked.
enum PreprocessingCheck {
    static func check(_ normalization: InGraphNormalization?, against config: SAMConfig) throws(ConversionFailure) {
        guard let normalization else { return }
        let expected = config.imageEncoder.preprocessing
        let file = normalization.file
        guard let mean = normalization.pixelMean, let std = normalization.pixelStd else {
            let found = normalization.meanTensor.map { "a pixel mean ('\($0)') but no std" } ?? "a pixel std ('\(normalization.stdTensor ?? "?")') but no mean"
            throw ConversionFailure("\(file): the graph normalises the image with \(found); the model's preprocessing "
                                    + "is (x - \(expected.pixelMean)) / \(expected.pixelStd)")
        }
        // The graph holds float32 constants: equal when the configured values round to the same floats.
        func same(_ stored: [Double], _ configured: [Double]) -> Bool {
            stored.count == configured.count && zip(stored, configured).allSatisfy { Float($0) == Float($1) }
        }
        if !same(mean, expected.pixelMean) {
            throw ConversionFailure("\(file): tensor '\(normalization.meanTensor ?? "?")': the graph subtracts pixel mean \(mean), "
                                    + "the model's preprocessing \(expected.pixelMean)")
        }
        if !same(std, expected.pixelStd) {
            throw ConversionFailure("\(file): tensor '\(normalization.stdTensor ?? "?")': the graph divides by pixel std \(std), "
                                    + "the model's preprocessing by \(expected.pixelStd)")
        }
    }
}
