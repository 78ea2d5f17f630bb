import SAMFormats
import SAMTensor

/// ONNX exports of all or part of a SAM model, TorchScript-based (`dynamo=False`: unnamed
/// initializers, scope in node names) or dynamo-based (names under a wrapper prefix, scope in
/// node metadata, external data). Each stored float tensor of two or more elements becomes
/// canonical weights, the dense positional encoding, a recognised non-weight, or an error.
public enum ONNXImport {
    public static func importModel(_ path: String, options: ImportOptions = ImportOptions()) throws(ImportError) -> ImportedWeights {
        let model: ONNXModel
        do { model = try ONNXModel(path: path) } catch { throw ImportError(error) }
        var mapper = ONNXWeightMapper(model: model, file: path, options: options)
        return try mapper.run()
    }
}

/// One ONNX file's import (see `ONNXImport`).
struct ONNXWeightMapper {
    let model: ONNXModel
    let file: String
    let options: ImportOptions
    let index: ONNXGraphIndex
    /// Components the file holds, from tensor names and node scopes.
    let components: Set<SAMComponent>
    var result = ImportedWeights()
    var unmapped: [UnmappedTensor] = []
    /// Quantized weights already turned into float32, by stored name (`read` returns these).
    var dequantized: [String: Tensor] = [:]
    /// The quantized weights dequantized into `dequantized`, by stored name.
    var quantizedSources: [String: ONNXQuantizedWeight] = [:]

    init(model: ONNXModel, file: String, options: ImportOptions) {
        self.model = model
        self.file = file
        self.options = options
        let shapes = Dictionary(model.storedTensors.map { ($0.name, $0.shape) }, uniquingKeysWith: { first, _ in first })
        index = ONNXGraphIndex(model.graph) { name in
            guard let shape = shapes[name], (try? Shape.elementCount(shape)).map({ $0 <= 8 }) == true,
                  let tensor = try? model.tensor(named: name) else { return nil }
            return (0..<tensor.elementCount).map(tensor.value(at:))
        }
        let named = model.storedTensors.compactMap { CanonicalNames.resolveParameter($0.name)?.component }
        components = index.scopeComponents.union(named)
        result.files = [file]
    }

    mutating func run() throws(ImportError) -> ImportedWeights {
        try checkOperatorTypes()
        if let failure = index.structuralFailure {
            throw ImportError(.unmappedTensors, file: file,
                              "no tensor keeps a PyTorch name and no node says its module, and the graph's structure "
                                + "does not match the runtime's module order: \(failure)")
        }
        try readFacts()
        let quantized = try findQuantizedWeights()
        let parameters = Set(quantized.values.flatMap { [$0.scale] + ($0.zeroPoint.map { [$0] } ?? []) })
        for stored in model.storedTensors {
            // The reader refused dims that overflow (`ONNXModel.describe`): the count is exact here.
            guard (try? Shape.elementCount(stored.shape)) ?? 0 >= 2 else { continue }
            if let weight = quantized[stored.name] {
                try importQuantized(weight)
                continue
            }
            if parameters.contains(stored.name) {
                result.ignored.append(DroppedTensor(file: file, name: stored.name, rule: .quantizationParameter))
                continue
            }
            if let dtype = stored.elementType.dtype, dtype.isFloatingPoint {
                try importTensor(stored)
            } else if Self.unreadableFloatCodes.contains(stored.elementType.code) {
                unmapped.append(UnmappedTensor(file: file, name: stored.name, dtype: stored.elementType.name, shape: stored.shape,
                                               context: "element type \(stored.elementType.name) is not one the readers convert"))
            } else if let named = CanonicalNames.resolveParameter(stored.name), CanonicalNames.floatLeaves.contains(CanonicalNames.leaf(named.path)) {
                // Named as a float parameter but stored as integers, bools or strings: said so, not left for
                // the model check to call "not supplied".
                throw ImportError(.wrongElementType, file: file, tensor: stored.name,
                                  "element type \(stored.elementType.name) \(Shape.text(stored.shape)); the weight \(named.path) "
                                    + "must be FLOAT, FLOAT16, DOUBLE or BFLOAT16 (or int8/uint8 read through DequantizeLinear or MatMulInteger)")
            }
        }
        try AttentionBiasCaches.recover(in: &result, file: file)
        try StateDictRules.apply(to: &result, file: file, eps: options.batchNormEps)
        StateDictRules.markExporterFoldedConvBN(in: &result)
        try Unmapped.report(unmapped, file: file, into: &result, options: options,
                            note: index.structuralNote.map { "matching the graph's structure did not help: \($0)" })
        result.referencedFiles = model.externalDataFilesRead  // only what was read, after its path was checked
        return result
    }

    /// ONNX float element types without a reader dtype (bfloat16, float8 variants, float4): weight-like, never skipped.
    static let unreadableFloatCodes: Set<Int32> = [16, 17, 18, 19, 20, 23]

    func read(_ name: String) throws(ImportError) -> Tensor {
        if let tensor = dequantized[name] { return tensor }
        return try Self.readStored(model, name)
    }

    static func readStored(_ model: ONNXModel, _ name: String) throws(ImportError) -> Tensor {
        do { return try model.tensor(named: name, copyingExternalData: true).narrowedToFloat32().tensor } catch { throw ImportError(error) }
    }

    /// The canonical tensor `layout` makes of a stored one; a failure names the file and the stored tensor.
    static func laidOut(_ tensor: Tensor, _ layout: ONNXTarget.Layout, stored: String, file: String) throws(ImportError) -> Tensor {
        do { return try layout.apply(to: tensor) } catch { throw ImportError(.invalidLayout, file: file, tensor: stored, error.message) }
    }

    // MARK: - One stored tensor

    mutating func importTensor(_ stored: ONNXInitializer) throws(ImportError) {
        result.facts.storedPrecisions[file, default: []].insert(stored.elementType.description)
        try importWeight(stored, storedName: stored.name, uses: index.uses(of: stored.name))
    }

    mutating func importQuantized(_ weight: ONNXQuantizedWeight) throws(ImportError) {
        dequantized[weight.stored.name] = try dequantize(weight)
        quantizedSources[weight.stored.name] = weight
        result.facts.storedPrecisions[file, default: []].insert(weight.description)
        try importWeight(weight.stored, storedName: weight.baseName, uses: weight.uses, derivation: .dequantized)
    }

    /// Names one stored weight: by its own name (`storedName`, without a quantizer's suffix), by
    /// the modules of the nodes that read it (`uses`), or as a recognised non-weight.
    mutating func importWeight(_ stored: ONNXInitializer, storedName: String, uses: [ONNXUse],
                               derivation: Derivation = .stored) throws(ImportError) {
        // 0. A SAM 2 checkpoint name only video mode uses.
        if case .videoOnly = SAM2Names.resolve(storedName) {
            result.ignored.append(DroppedTensor(file: file, name: stored.name, rule: .dropVideoOnly))
            return
        }
        // 1. It kept its PyTorch name (SAM 2's `sam_` components and `no_mem_embed` included).
        if let named = CanonicalNames.resolveParameter(storedName) ?? SAM2Names.parameterPath(storedName).map(CanonicalPath.sam2) {
            let transposed = named.path.hasSuffix(".weight") && uses.contains {
                (($0.node.opType == "MatMul" || $0.node.opType == "MatMulInteger") && $0.input == 1)
                    || ($0.node.opType == "Gemm" && $0.input == 1 && !ONNXConsumerRules.gemmTransposesB($0.node))
            }
            try apply(.tensor(name: named.path, layout: transposed ? .linearWeightFromMatMul : .asStored,
                              rule: transposed ? .namedLinearWeightTransposed : .exportedName), to: stored, derivation: derivation)
            // An exporter that deduplicates equal initializers feeds one named tensor to several
            // modules (LayerNorms still at their initial ones): each reader's module gets its copy.
            for use in uses {
                guard let target = ONNXConsumerRules.target(for: use, shape: stored.shape, components: components),
                      case .tensor(let name, _, _) = target, name != named.path, result.tensors[name] == nil,
                      CanonicalNames.leaf(name) == CanonicalNames.leaf(named.path) else { continue }
                try apply(target, to: stored, namedBy: use.scopeEvidence, derivation: derivation)
            }
            return
        }
        // 2. Its readers name it.
        var targets: [(target: ONNXTarget, evidence: ScopeEvidence?)] = []
        for use in uses {
            if let target = ONNXConsumerRules.target(for: use, shape: stored.shape, components: components),
               !targets.contains(where: { $0.target == target }) {
                targets.append((target, use.scopeEvidence))
            }
        }
        if !targets.isEmpty {
            for (target, evidence) in targets { try apply(target, to: stored, namedBy: evidence, derivation: derivation) }
            return
        }
        // 3. A ViT relative-position table gathered at run time (names no module by its readers' op).
        if try importRelativePositionsGatheredAtRunTime(stored, uses: uses, derivation: derivation) { return }
        // 4. Not a weight: the dense PE, its coordinate grid, or shape arithmetic.
        if try importDensePE(stored) { return }
        if try importConstantDenseEmbedding(stored, uses: uses) { return }
        if let rule = try recogniseNonWeight(stored, uses: uses) {
            result.ignored.append(DroppedTensor(file: file, name: stored.name, rule: rule))
            return
        }
        let context = uses.isEmpty ? "not read by any node" : "read by " + uses.prefix(4).map(\.text).joined(separator: "; ")
        unmapped.append(UnmappedTensor(file: file, name: stored.name, dtype: stored.elementType.description,
                                       shape: stored.shape, context: context))
    }

    mutating func apply(_ target: ONNXTarget, to stored: ONNXInitializer, namedBy evidence: ScopeEvidence? = nil,
                        derivation: Derivation = .stored) throws(ImportError) {
        let tensor = try read(stored.name)
        switch target {
        case .tensor(let name, let layout, let rule):
            let value = try Self.laidOut(tensor, layout, stored: stored.name, file: file)
            // Dequantized weights are held; stored ones are read and laid out again when needed.
            let (model, file, storedName) = (self.model, self.file, stored.name)
            var remake: ImportedTensor.Remake?
            if dequantized[stored.name] == nil {
                remake = { () throws(ImportError) -> Tensor in
                    try ONNXWeightMapper.laidOut(try ONNXWeightMapper.readStored(model, storedName), layout, stored: storedName, file: file)
                }
            }
            try result.insert(name, value, origin: origin(stored, rule, derivation, namedBy: evidence), remake: remake)
            if let source = quantizedSources[stored.name], let scales = try int8RowScales(source, layout: layout) {
                result.tensors[name]?.exporterInt8Scales = scales
            }
        case .outputTokens(let iouName, let masksName):
            // SAM-HQ's decoder puts its HQ token last, SAM 2's its object-score token first.
            let tokens = try splitObjectScoreToken(try splitHQToken(tensor, stored: stored, derivation: derivation),
                                                   stored: stored, derivation: derivation)
            let (iou, masks) = try layoutStep(stored) { () throws(LayoutRuleError) in try LayoutRules.splitOutputTokens(tokens) }
            try result.insert(iouName, iou, origin: origin(stored, .outputTokensSplit, derivation))
            try result.insert(masksName, masks, origin: origin(stored, .outputTokensSplit, derivation))
        }
    }

    /// Runs a layout rule; its failure becomes an error naming this file and the stored tensor.
    func layoutStep<T>(_ stored: ONNXInitializer, _ rule: () throws(LayoutRuleError) -> T) throws(ImportError) -> T {
        do { return try rule() } catch { throw ImportError(.invalidLayout, file: file, tensor: stored.name, error.message) }
    }

    func origin(_ stored: ONNXInitializer, _ rule: ImportRule, _ derivation: Derivation = .stored,
                namedBy evidence: ScopeEvidence? = nil) -> TensorOrigin {
        TensorOrigin(file: file, sources: [stored.name], rule: rule, derivation: derivation, namedBy: evidence?.rawValue)
    }
}
