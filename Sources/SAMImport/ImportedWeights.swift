import SAMTensor

/// How a canonical tensor's values relate to the stored bytes: decides whether two sources
/// must agree bit for bit or within the fold tolerance.
public enum Derivation: String, Sendable {
    /// The stored elements, possibly transposed, reshaped, split or un-gathered: exact.
    case stored
    /// Computed here (BatchNorm folded in double precision).
    case foldedByImporter
    /// Computed by the exporter in float32 (BatchNorm folded into Conv, constant folding).
    case computedByExporter
    /// (q - zero point) * scale from a quantized int8/uint8 weight: the source is lossy, the
    /// dequantization exact up to one float32 rounding.
    case dequantized
}

/// Where a canonical tensor came from.
public struct TensorOrigin: Sendable, Equatable, CustomStringConvertible {
    public let file: String
    /// The stored tensor(s) it was made from (initializer, Constant or dataset names).
    public let sources: [String]
    public let rule: ImportRule
    public let derivation: Derivation
    /// How the module was found when the export did not name it (`ScopeEvidence`'s text).
    public let namedBy: String?

    public init(file: String, sources: [String], rule: ImportRule, derivation: Derivation, namedBy: String? = nil) {
        self.file = file
        self.sources = sources
        self.rule = rule
        self.derivation = derivation
        self.namedBy = namedBy
    }

    public var description: String {
        "\(file): \(sources.joined(separator: " + ")) [\(rule)" + (namedBy.map { "; \($0)" } ?? "") + "]"
    }
}

/// One canonical tensor and where it came from.
public struct ImportedTensor: Sendable {
    public let tensor: Tensor
    public var origin: TensorOrigin
    /// Other inputs that supplied the same tensor (and agreed).
    public var alsoIn: [String] = []
    /// The exporter's own symmetric int8 scales, one per row of this (canonical) tensor, when it was
    /// stored as int8 codes with zero point 0 (onnxruntime's QInt8): `samconvert --dtype int8` keeps
    /// those codes and scales instead of rounding the dequantized values a second time.
    public var exporterInt8Scales: [Float]?

    public init(tensor: Tensor, origin: TensorOrigin) {
        self.tensor = tensor
        self.origin = origin
    }
}

/// A stored tensor a rule deliberately left out (head, counters, derived constants).
public struct DroppedTensor: Sendable, Equatable {
    public let file: String
    public let name: String
    public let rule: ImportRule
}

/// Facts an input states besides weights.
public struct ImportFacts: Sendable, Equatable {
    /// g of the [1,C,g,g] image embedding (from graph inputs/outputs, the PE grid, or the dense PE).
    public var imageEmbeddingSize: Int?
    /// C of the image embedding.
    public var embeddingDim: Int?
    /// Default-domain opset of each ONNX input, by file.
    public var opsets: [String: Int64] = [:]
    /// Symbolic point-count dimension names of decoder inputs, by file (dynamic: any count).
    public var dynamicPointInputs: [String: [String]] = [:]
    /// S of an image-encoder graph input [1,3,S,S].
    public var imageSize: Int?
    /// Stride of each stage's PatchMerging depthwise conv (`image_encoder.layers.i.downsample.conv2`), by i.
    public var mergeStrides: [Int: Int] = [:]
    /// How each file stored the weights it supplied ("f32", "f16", "i8 per-channel (MatMulInteger)" ...), by file.
    public var storedPrecisions: [String: Set<String>] = [:]
    /// Pixel statistics an encoder export applies in its graph (samexporter's preprocessing), if any.
    public var inGraphNormalization: InGraphNormalization?

    public init() {}
}

/// Two sources of one canonical tensor, compared at merge.
public struct Agreement: Sendable, CustomStringConvertible {
    public let tensor: String
    public let files: [String]
    public let bitExact: Bool
    public let maxAbsDifference: Double
    /// Largest |a-b| / max(|a|,|b|) over elements that differ.
    public let maxRelDifference: Double
    public let derivations: [Derivation]

    public var description: String {
        bitExact ? "\(tensor): bit-exact (\(files.joined(separator: ", ")))"
            : "\(tensor): max abs \(maxAbsDifference), max rel \(maxRelDifference) (\(files.joined(separator: " vs ")); \(derivations.map(\.rawValue).joined(separator: " vs ")))"
    }
}

/// The result of importing one or more exported files: canonical weights keyed by
/// PyTorch state-dict path of the full `Sam`, the dense positional encoding when a file
/// supplies it, and a record of every decision.
public struct ImportedWeights: Sendable {
    public internal(set) var tensors: [String: ImportedTensor] = [:]
    /// `prompt_encoder.get_dense_pe()` [1,C,g,g], when an input supplies it.
    public internal(set) var denseImagePE: ImportedTensor?
    public internal(set) var facts = ImportFacts()
    public internal(set) var dropped: [DroppedTensor] = []
    /// Recognised non-weights (PE grid, shape arithmetic), with the rule that recognised them.
    public internal(set) var ignored: [DroppedTensor] = []
    /// Weight-like tensors no rule maps; only non-empty when `ImportOptions.allowUnmapped`.
    public internal(set) var unmapped: [UnmappedTensor] = []
    /// Every tensor two inputs both supplied, with how closely they agreed.
    public internal(set) var agreements: [Agreement] = []
    /// Input files, in import order.
    public internal(set) var files: [String] = []
    /// Files the inputs pulled bytes from besides themselves (ONNX external data), in import order.
    public internal(set) var referencedFiles: [String] = []

    public init() {}

    /// Canonical name -> tensor, what the `.samw` writer and the runtime's `WeightStore` take.
    public var canonicalTensors: [String: Tensor] { tensors.mapValues(\.tensor) }

    public var names: [String] { tensors.keys.sorted() }

    /// Components with at least one tensor.
    public var components: Set<SAMComponent> { Set(tensors.keys.compactMap(SAMComponent.of)) }

    public subscript(name: String) -> Tensor? { tensors[name]?.tensor }

    /// The agreement with the largest absolute difference, if any inputs overlapped.
    public var worstAgreement: Agreement? { agreements.max { $0.maxAbsDifference < $1.maxAbsDifference } }
}

extension ImportedWeights {
    /// Adds one canonical tensor of the file being imported. Two stored tensors of one file may
    /// map to the same name (tied weights) only if they hold the same bits.
    mutating func insert(_ name: String, _ tensor: Tensor, origin: TensorOrigin) throws(ImportError) {
        if let existing = tensors[name] {
            guard existing.tensor.isBitwiseEqual(to: tensor) else {
                throw ImportError(.conflictingTensors, file: origin.file, tensor: name,
                                  "two stored tensors map here with different values: \(existing.origin) and \(origin)")
            }
            tensors[name]?.origin = TensorOrigin(file: origin.file, sources: existing.origin.sources + origin.sources,
                                                 rule: existing.origin.rule, derivation: existing.origin.derivation,
                                                 namedBy: existing.origin.namedBy)
            return
        }
        tensors[name] = ImportedTensor(tensor: tensor, origin: origin)
    }
}
