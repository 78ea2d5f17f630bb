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
    public let storedTensors: [String: Tensor]
    /// The matrices stored quantized (`--dtype int8|q4`), not in `storedTensors`.
    public let quantizedWeights: [String: QuantizedWeight]
    /// Weights holding NaN or infinity, written because `allowNonFinite` (empty otherwise).
    public let nonFinite: [NonFiniteWeight]
}

/// Exported weights in, one checked .samw out: import and merge, resolve the architecture, build the
/// model strictly (so a file that would not load is never written), then write atomically.
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
        var explicitConfig: SAMConfig?
        if let file = plan.configFile {
            do { explicitConfig = try SAMConfig(contentsOf: file) } catch { throw ConversionFailure("\(error)") }
        }
        var options = ImportOptions()
        options.allowUnmapped = request.allowUnmapped
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
        let config = try ModelConfiguration.resolve(explicit: explicitConfig, configFile: plan.configFile, imported: imported,
                                                    maxPoints: request.maxPoints)
        let heldComponents = Set(imported.tensors.keys.compactMap(Sam.component(ofTensor:)))
        do { try config.validate(file: plan.configFile ?? "the configuration inferred from the weights", components: heldComponents) } catch {
            throw ConversionFailure("\(error)")
        }
        // Built to be checked, then dropped before writing: it holds a copy of every weight.
        let components: [String]
        let matrixKeys: Set<String>
        do {
            let store = WeightStore(imported.canonicalTensors, source: plan.weightFiles.joined(separator: " + "))
            let sam = try Sam(weights: store, config: config, densePositionalEncoding: imported.denseImagePE.map { FloatTensor($0.tensor) })
            components = sam.presentComponents
            matrixKeys = store.matrixKeys
        } catch {
            throw ConversionFailure("the weights do not make a model: \(error)")
        }
        guard !components.isEmpty else {
            throw ConversionFailure("\(plan.weightFiles.joined(separator: ", ")): the weights make no component of a SAM model; nothing was written")
        }

        let (stored, narrowedPE, overflowed) = Self.store(imported, precision: request.precision)
        if !overflowed.isEmpty && !request.allowNonFinite {
            throw ConversionFailure(Self.nonFiniteMessage(overflowed, "do not fit f16") + " (or convert with --dtype f32)")
        }
        var plain = stored
        var quantized: [String: QuantizedWeight] = [:]
        if let scheme = request.precision.quantization {
            progress("quantizing \(matrixKeys.count) matrices to \(request.precision.rawValue)")
            (plain, quantized) = try WeightQuantization.quantize(stored, matrices: matrixKeys, scheme: scheme,
                                                                 exporterScales: imported.tensors.compactMapValues(\.exporterInt8Scales))
        }
        nonFinite += overflowed
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
            try ModelFile.write(tensors: plain, quantized: quantized, densePositionalEncoding: narrowedPE, metadata: metadata,
                                to: request.output, policy: policy)
        } catch {
            throw ConversionFailure("\(error)")
        }
        return ConversionResult(imported: imported, metadata: metadata, storedTensors: plain, quantizedWeights: quantized,
                                nonFinite: nonFinite)
    }

    /// The tensors as stored at `precision`, and every one that narrowing to f16 overflowed.
    static func store(_ imported: ImportedWeights, precision: StoragePrecision)
        -> (tensors: [String: Tensor], densePE: Tensor?, overflowed: [NonFiniteWeight]) {
        var tensors: [String: Tensor] = [:]
        var overflowed: [NonFiniteWeight] = []
        func narrow(_ name: String, _ source: ImportedTensor) -> Tensor {
            let (tensor, count, largest) = precision.narrow(source.tensor)
            if count > 0 {
                overflowed.append(NonFiniteWeight(tensor: name, file: source.origin.file, nan: 0, infinite: count,
                                                  elements: tensor.elementCount, beyondHalf: largest))
            }
            return tensor
        }
        for name in imported.tensors.keys.sorted() { tensors[name] = narrow(name, imported.tensors[name]!) }
        let densePE = imported.denseImagePE.map { narrow("denseImagePE", $0) }
        return (tensors, densePE, overflowed)
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
