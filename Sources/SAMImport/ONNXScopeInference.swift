import SAMFormats

/// How a node's PyTorch module was found when the exporter did not write it down.
enum ScopeEvidence: String, Sendable {
    /// The parameters its `pkg.torch.onnx.fx_node` call names all belong to one module.
    case fxNode = "module from the node's fx_node parameters"
    /// Its stored inputs that kept PyTorch names all belong to one module.
    case namedInputs = "module of the node's named inputs"
    /// A MatMul whose output is added to a named `X.bias`: the Linear `X`.
    case linearBias = "Linear whose named bias its MatMul feeds"
    /// A [C,1,1] affine after a LayerNorm2d normalisation of Sequential child `S.k`'s output: `S.(k+1)`.
    case layerNorm2dPosition = "LayerNorm2d, the Sequential child after the layer it normalises"
    /// A 1-D tensor reshaped and added to a quantized Conv's rescaled product: that Conv's bias.
    case quantizedConvBias = "bias of the quantized Conv whose product it is added to"
    /// Nothing named it: the module the runtime expects at its place in the graph (`ONNXStructuralMatch`).
    case structure = "module at its place in the runtime's module order (names and metadata absent)"
}

/// Module scopes for the nodes of graphs whose exporter left them flat or dropped them:
/// dynamo exports of wrappers that call a model's internals directly (`SamOnnxModel`), and
/// graphs re-saved by tools that remove node metadata (onnxslim). Each rule reads only what
/// the graph states: fx_node call arguments, initializer names, and data flow to named neighbours.
struct ONNXScopeInference {
    let nodes: [ONNXNode]
    /// Stored tensors (initializers and Constant outputs) by name, with their shapes.
    let stored: [String: [Int]]
    let readers: [String: [(node: Int, input: Int)]]
    let producers: [String: Int]
    private let flattened: FlattenedParameterNames

    init(graph: ONNXGraph, readers: [String: [(node: Int, input: Int)]], producers: [String: Int]) {
        nodes = graph.nodes
        var stored: [String: [Int]] = [:]
        for tensor in graph.initializers + graph.constants { stored[tensor.name] = tensor.shape }
        self.stored = stored
        self.readers = readers
        self.producers = producers
        flattened = FlattenedParameterNames(dottedNames: Array(stored.keys))
    }

    /// What the rules found for the nodes `explicit` leaves empty (""): a scope with its evidence,
    /// or, where a rule found several modules and none found one, those candidates.
    struct Inferred {
        var scopes: [String]
        var evidence: [ScopeEvidence?]
        var ambiguous: [Int: [String]] = [:]
    }

    /// - Parameter evidence: how scopes already in `explicit` were found (nil: exported).
    func infer(explicit: [String], evidence: [ScopeEvidence?]? = nil) -> Inferred {
        var found = Inferred(scopes: explicit, evidence: evidence ?? [ScopeEvidence?](repeating: nil, count: nodes.count))
        func decide(_ index: Int, _ rules: [(ScopeEvidence, () -> Set<String>)]) {
            var candidates: Set<String> = []
            for (evidence, rule) in rules {
                let modules = rule()
                if modules.count == 1 {
                    (found.scopes[index], found.evidence[index]) = (modules.first!, evidence)
                    found.ambiguous[index] = nil
                    return
                }
                candidates.formUnion(modules)
            }
            if candidates.count > 1 { found.ambiguous[index] = candidates.sorted() }
        }
        for index in nodes.indices where found.scopes[index].isEmpty {
            decide(index, [(.fxNode, { fxModules(nodes[index]) }), (.namedInputs, { namedInputModules(nodes[index]) })])
        }
        for index in nodes.indices where found.scopes[index].isEmpty {
            decide(index, [(.linearBias, { linearByBias(index) }),
                           (.layerNorm2dPosition, { layerNorm2dModules(index, scopes: found.scopes, evidence: found.evidence) }),
                           (.quantizedConvBias, { quantizedConvBias(index, scopes: found.scopes) })])
        }
        return found
    }

    // MARK: - Rules (each returns every module it finds; one is an answer, more are candidates)

    /// The modules whose parameters the fx_node call names.
    func fxModules(_ node: ONNXNode) -> Set<String> {
        guard let text = node.metadataProps["pkg.torch.onnx.fx_node"], let call = FXNodeCall(metadata: text) else { return [] }
        return Set(call.parameterPlaceholders.compactMap { flattened.dotted($0).flatMap(Self.module(ofParameter:)) })
    }

    /// The modules whose named parameters the node reads (a Conv reading `X.weight` and `X.bias`).
    func namedInputModules(_ node: ONNXNode) -> Set<String> {
        Set(node.inputs.filter { stored[$0] != nil }.compactMap { name -> String? in
            CanonicalNames.resolveParameter(name) == nil ? nil : Self.module(ofParameter: name)
        })
    }

    /// `MatMul(x, W)` whose output an Add combines with a stored tensor named `X.bias`: Linear `X`.
    func linearByBias(_ index: Int) -> Set<String> {
        let node = nodes[index]
        guard node.opType == "MatMul" || node.opType == "MatMulInteger", node.inputs.count >= 2, stored[node.inputs[1]] != nil,
              CanonicalNames.resolveParameter(node.inputs[1]) == nil, let output = node.outputs.first else { return [] }
        let biases = Set((readers[output] ?? []).compactMap { reader -> String? in
            let add = nodes[reader.node]
            guard add.opType == "Add" else { return nil }
            return add.inputs.first { $0 != output && stored[$0] != nil && $0.hasSuffix(".bias") && CanonicalNames.resolveParameter($0) != nil }
        })
        return Set(biases.compactMap(Self.module(ofParameter:)))
    }

    /// LayerNorm2d's `weight[:, None, None] * x + bias[:, None, None]` folded to [C,1,1] constants.
    /// The Mul's other operand is the normalised map: walking back through the normalisation
    /// (which takes a ReduceMean) reaches the layer before it; upstream's LayerNorm2d always sits in
    /// a Sequential right after that layer. The Add's other operand is that Mul.
    /// ref: segment_anything/modeling/common.py LayerNorm2d.forward; mask_decoder.py output_upscaling,
    /// prompt_encoder.py mask_downscaling, image_encoder.py neck.
    func layerNorm2dModules(_ index: Int, scopes: [String], evidence: [ScopeEvidence?]) -> Set<String> {
        let node = nodes[index]
        guard node.opType == "Mul" || node.opType == "Add", node.inputs.count == 2,
              let affine = node.inputs.firstIndex(where: { stored[$0].map(ONNXConsumerRules.isChannelColumn) ?? false }),
              let producer = producers[node.inputs[1 - affine]] else { return [] }
        // The bias added to the weighted map; or, where a tool dropped a multiply by ones, to the
        // normalised map itself.
        if node.opType == "Add", nodes[producer].opType == "Mul", evidence[producer] == .layerNorm2dPosition {
            return [scopes[producer]]
        }
        let previous = scopesBeforeNormalisation(from: producer, scopes: scopes)
        return Set(previous.compactMap { scope -> String? in
            let parts = scope.split(separator: ".").map(String.init)
            guard let last = parts.last, let child = Int(last) else { return nil }
            return (parts.dropLast() + [String(child + 1)]).joined(separator: ".")
        })
    }

    /// quantize_dynamic adds a Conv's float bias after rescaling the integer product:
    /// `Add(Mul(Cast(ConvInteger(...)), scale), Reshape(bias, shape))`. The Reshape takes the ConvInteger's module.
    func quantizedConvBias(_ index: Int, scopes: [String]) -> Set<String> {
        let node = nodes[index]
        guard node.opType == "Reshape", let bias = node.inputs.first, stored[bias]?.count == 1,
              let output = node.outputs.first else { return [] }
        let convolutions = Set((readers[output] ?? []).compactMap { reader -> String? in
            let add = nodes[reader.node]
            guard add.opType == "Add", add.inputs.count == 2 else { return nil }
            var current = producers[add.inputs[1 - reader.input]]
            for _ in 0..<3 {
                guard let index = current else { return nil }
                if nodes[index].opType == "ConvInteger" { return scopes[index].isEmpty ? nil : scopes[index] }
                guard ["Mul", "Cast"].contains(nodes[index].opType) else { return nil }
                current = nodes[index].inputs.lazy.compactMap { self.producers[$0] }.first
            }
            return nil
        })
        return convolutions
    }

    /// The scopes found walking upstream from `start` through unscoped nodes, provided those
    /// nodes include a ReduceMean (the normalisation's mean).
    private func scopesBeforeNormalisation(from start: Int, scopes: [String]) -> Set<String> {
        var pending = [start], seen: Set<Int> = [start], passedMean = false
        var found: Set<String> = []
        while !pending.isEmpty, seen.count <= 32 {
            let index = pending.removeFirst()
            if !scopes[index].isEmpty {
                found.insert(scopes[index])
                continue
            }
            if nodes[index].opType == "ReduceMean" { passedMean = true }
            for input in nodes[index].inputs where stored[input] == nil {
                if let producer = producers[input], seen.insert(producer).inserted { pending.append(producer) }
            }
        }
        return passedMean ? found : []
    }

    /// `a.b.weight` -> `a.b`.
    static func module(ofParameter path: String) -> String? {
        guard let dot = path.lastIndex(of: ".") else { return nil }
        return String(path[..<dot])
    }
}
