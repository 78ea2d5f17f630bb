import Foundation
import SAMFiles
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
    /// With a quantizing `precision`: image-encoder matrices to store float16 instead, by shell glob
    /// on their names (`samconvert --half-matrices`); each must match one.
    public var halfMatrices: [String] = []
    public var overwrite = false
    public var allowUnmapped = false
    /// Write weights holding NaN or infinity (from an input, or from `--dtype f16` beyond its range)
    /// instead of refusing them; they are listed in `ConversionResult.nonFinite`.
    public var allowNonFinite = false

    public init(inputs: [String], output: String) {
        self.inputs = inputs
        self.output = output
    }
}

/// What a conversion produced, for the summary.
public struct ConversionResult: Sendable {
    public let imported: ImportedWeights
    public let metadata: ModelFileMetadata
    /// The plain tensors as written (their bytes are made again on request, not held).
    public let storedTensors: [String: StoredTensor]
    /// The matrices stored quantized (`--dtype int8|q4`), not in `storedTensors`.
    public let quantizedWeights: [String: StoredQuantizedWeight]
    /// Weights holding NaN or infinity, written because `allowNonFinite` (empty otherwise).
    public let nonFinite: [NonFiniteWeight]
}

/// Exported weights in, one checked .samw out: import and merge, resolve the architecture, build the
/// model strictly (so a file that would not load is never written), then write atomically. Large
/// tensors are read from the inputs when each step needs them, one at a time (`ImportedTensor`).
public enum Converter {
    public static let version = "0.1.0"

    public static func run(_ request: ConversionRequest, progress: (String) -> Void = { _ in }) throws(ConversionFailure) -> ConversionResult {
        if let maxPoints = request.maxPoints, !ConfigBounds.maxPoints.contains(maxPoints) {
            throw ConversionFailure("--max-points \(maxPoints) is not in \(ConfigBounds.maxPoints.lowerBound)...\(ConfigBounds.maxPoints.upperBound)")
        }
        let plan = try InputPlan(inputs: request.inputs, imagePE: request.imagePE, config: request.configFile)
        // What may stand at --out (nothing, or with --force a regular file that is none of the inputs),
        // checked before the work and again at the final rename, which never replaces a file that
        // appeared meanwhile unless --force.
        var policy = OutputPolicy(existing: request.overwrite ? .replace : .keep,
                                  inputs: plan.provenanceFiles + request.inputs, option: "--out")
        do { try OutputRule.check(request.output, policy) } catch { throw ConversionFailure(error.message) }
        // The config is read (and its sizes checked) before the weights.
        let explicitConfig = try plan.configFile.map { (file) throws(ConversionFailure) in try ExplicitConfiguration(contentsOf: file) }
        var options = ImportOptions()
        options.allowUnmapped = request.allowUnmapped
        if let eps = explicitConfig?.config.imageEncoder.runtimeBatchNormEps { options.runtimeBatchNormEps = eps }
        // Weight files hashed beside the import; the files they reference and the config after it.
        let configFiles = plan.configFile.map { [$0] } ?? []
        let provenance = BackgroundProvenance(files: plan.weightFiles, converterVersion: version)
        // Whatever ends the conversion, the hashing thread ends first.
        defer { provenance.stop() }
        for file in plan.weightFiles { progress("reading \(file)") }
        let imported: ImportedWeights
        do { imported = try SAMImporter.importFiles(plan.weightFiles, options: options) } catch {
            throw ConversionFailure("\(error)")
        }
        guard !imported.tensors.isEmpty else {
            throw ConversionFailure("\(plan.weightFiles.joined(separator: ", ")): no weights of a SAM model found; nothing was written")
        }
        // Files the inputs pulled bytes from (ONNX external data), hashed beside the model check.
        let referenced = BackgroundProvenance(files: imported.referencedFiles + configFiles, converterVersion: version)
        defer { referenced.stop() }
        policy.inputs += imported.referencedFiles
        var nonFinite = NonFiniteScan.weights(of: imported)
        if !nonFinite.isEmpty && !request.allowNonFinite {
            throw ConversionFailure(Self.nonFiniteMessage(nonFinite, "hold NaN or infinity"))
        }

        progress("checking the model builds from \(imported.tensors.count) tensors")
        let config = try ModelConfiguration.resolve(explicit: explicitConfig, imported: imported, maxPoints: request.maxPoints)
        let heldComponents = Set(imported.tensors.keys.compactMap(Sam.component(ofTensor:)))
        do { try config.validate(file: plan.configFile ?? "the configuration inferred from the weights", components: heldComponents) } catch {
            throw ConversionFailure("\(error)")
        }
        let (components, matrixKeys) = try ModelCheck.build(imported, config: config, source: plan.weightFiles.joined(separator: " + "))
        guard !components.isEmpty else {
            throw ConversionFailure("\(plan.weightFiles.joined(separator: ", ")): the weights make no component of a SAM model; nothing was written")
        }

        let keptHalf = try WeightQuantization.keptHalf(request.halfMatrices, matrices: matrixKeys, precision: request.precision)
        if request.precision.quantization != nil {
            let quantized = matrixKeys.filter { Sam.component(ofTensor: $0) == Sam.imageEncoderKey && !keptHalf.contains($0) }.count
            progress("quantizing the image encoder's \(quantized) matrices to \(request.precision.rawValue)"
                     + (keptHalf.isEmpty ? "" : ", keeping \(keptHalf.count) float16 (--half-matrices)"))
        }
        let stored = try StoredRows(imported, precision: request.precision, matrices: matrixKeys, keptHalf: keptHalf)
        if !stored.overflowed.isEmpty && !request.allowNonFinite {
            throw ConversionFailure(Self.nonFiniteMessage(stored.overflowed, "do not fit f16") + " (or convert with --dtype f32)")
        }
        nonFinite += stored.overflowed
        var sources = try provenance.wait()
        sources.sources += try referenced.wait().sources
        for index in sources.sources.indices {
            sources.sources[index].weightsStoredAs = imported.facts.storedPrecisions[sources.sources[index].path]?.sorted()
        }
        let metadata = ModelFileMetadata(config: config, components: components, weightDType: request.precision.rawValue,
                                         densePositionalEncoding: nil, provenance: sources)
        try MetadataRoundTrip.check(metadata, output: request.output)
        progress("writing \(request.output)")
        do {
            try ModelFile.write(rows: stored.rows, densePositionalEncoding: stored.densePE, metadata: metadata,
                                to: request.output, policy: policy)
        } catch {
            throw ConversionFailure("\(error)")
        }
        return ConversionResult(imported: imported, metadata: metadata, storedTensors: stored.plain, quantizedWeights: stored.quantized,
                                nonFinite: nonFinite)
    }

    static func nonFiniteMessage(_ weights: [NonFiniteWeight], _ what: String) -> String {
        "\(weights.count) weight(s) \(what); a model with them computes NaN (pass --allow-nonfinite to write them anyway):\n  "
            + weights.prefix(20).map(\.description).joined(separator: "\n  ")
            + (weights.count > 20 ? "\n  ... \(weights.count - 20) more" : "")
    }
}

extension Sam {
    /// Canonical names of the components this model has.
    public var presentComponents: [String] {
        [imageEncoder.map { _ in Sam.imageEncoderKey }, promptEncoder.map { _ in "prompt_encoder" }, maskDecoder.map { _ in "mask_decoder" },
         video.map { _ in Sam.videoKey }]
            .compactMap { $0 }
    }
}
