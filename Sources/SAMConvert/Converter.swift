import Foundation
import SAMFormats
import SAMImport
import SAMModel
import SAMModelFile
import SAMTensor

/// What to convert and how (the samconvert command line, as values).
public struct ConversionRequest: Sendable {
    public var inputs: [String]
    public var output: String
    public var imagePE: String?
    public var configFile: String?
    public var maxPoints: Int?
    public var precision: StoragePrecision = .single
    public var overwrite = false
    public var allowUnmapped = false

    public init(inputs: [String], output: String) {
        self.inputs = inputs
        self.output = output
    }
}

/// What a conversion produced, for the summary.
public struct ConversionResult: Sendable {
    public let imported: ImportedWeights
    public let metadata: ModelFileMetadata
    public let storedTensors: [String: Tensor]
}

/// Exported weights in, one checked .samw out: import and merge, resolve the architecture, build the
/// model strictly (so a file that would not load is never written), then write atomically.
public enum Converter {
    public static let version = "0.1.0"

    public static func run(_ request: ConversionRequest, progress: (String) -> Void = { _ in }) throws(ConversionFailure) -> ConversionResult {
        if let maxPoints = request.maxPoints, maxPoints < 1 {
            throw ConversionFailure("--max-points must be at least 1, not \(maxPoints)")
        }
        let plan = try InputPlan(inputs: request.inputs, imagePE: request.imagePE, config: request.configFile)
        // What may stand at --out (nothing, or with --force a regular file that is none of the inputs),
        // checked before the work and again at the final rename, which never replaces a file that
        // appeared meanwhile unless --force.
        let policy = OutputPolicy(existing: request.overwrite ? .replace : .keep,
                                  inputs: plan.provenanceFiles + request.inputs, option: "--out")
        do { try OutputRule.check(request.output, policy) } catch { throw ConversionFailure(error.message) }
        var options = ImportOptions()
        options.allowUnmapped = request.allowUnmapped
        let provenance = BackgroundProvenance(files: plan.provenanceFiles, converterVersion: version)
        // Whatever ends the conversion, the hashing thread ends first.
        defer { provenance.stop() }
        for file in plan.weightFiles { progress("reading \(file)") }
        let imported: ImportedWeights
        do { imported = try SAMImporter.importFiles(plan.weightFiles, options: options) } catch {
            throw ConversionFailure("\(error)")
        }

        progress("checking the model builds from \(imported.tensors.count) tensors")
        let config = try ModelConfiguration.resolve(explicitFile: plan.configFile, imported: imported, maxPoints: request.maxPoints)
        // Built to be checked, then dropped before writing: it holds a copy of every weight.
        let components: [String]
        do {
            let sam = try Sam(weights: WeightStore(imported.canonicalTensors, source: plan.weightFiles.joined(separator: " + ")),
                              config: config, densePositionalEncoding: imported.denseImagePE.map { FloatTensor($0.tensor) })
            components = sam.presentComponents
        } catch {
            throw ConversionFailure("the weights do not make a model: \(error)")
        }

        let stored = imported.canonicalTensors.mapValues(request.precision.convert)
        var sources = try provenance.wait()
        for index in sources.sources.indices {
            sources.sources[index].weightsStoredAs = imported.facts.storedPrecisions[sources.sources[index].path]?.sorted()
        }
        let metadata = ModelFileMetadata(config: config, components: components, weightDType: request.precision.rawValue,
                                         densePositionalEncoding: nil, provenance: sources)
        progress("writing \(request.output)")
        do {
            try ModelFile.write(tensors: stored, densePositionalEncoding: imported.denseImagePE.map { request.precision.convert($0.tensor) },
                                metadata: metadata, to: request.output, policy: policy)
        } catch {
            throw ConversionFailure("\(error)")
        }
        return ConversionResult(imported: imported, metadata: metadata, storedTensors: stored)
    }
}

extension Sam {
    /// Canonical names of the components this model has.
    public var presentComponents: [String] {
        [imageEncoder.map { _ in Sam.imageEncoderKey }, promptEncoder.map { _ in "prompt_encoder" }, maskDecoder.map { _ in "mask_decoder" }]
            .compactMap { $0 }
    }
}
