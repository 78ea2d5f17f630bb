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

    init(graph: ONNXGraph, readers: [String: [(node: Int, input: Int)]]) {
        nodes = graph.nodes
        var stored: [String: [Int]] = [:]
        for tensor in graph.initializers + graph.constants { stored[tensor.name] = tensor.shape }
        self.stored = stored
        self.readers = readers
        var producers: [String: Int] = [:]
        for (index, node) in graph.nodes.enumerated() {
            for output in node.outputs where !output.isEmpty { producers[output] = index }
        }
        self.producers = producers
        flattened = FlattenedParameterNames(dottedNames: Array(stored.keys))
    }

    /// Scopes for the nodes `explicit` leaves empty (""), with the evidence for each.
    func infer(explicit: [String]) -> (scopes: [String], evidence: [ScopeEvidence?]) {
        var scopes = explicit
        var evidence = [ScopeEvidence?](repeating: nil, count: nodes.count)
        for index in nodes.indices where scopes[index].isEmpty {
            if let module = fxModule(nodes[index]) {
                (scopes[index], evidence[index]) = (module, .fxNode)
            } else if let module = namedInputModule(nodes[index]) {
                (scopes[index], evidence[index]) = (module, .namedInputs)
            }
        }
        for index in nodes.indices where scopes[index].isEmpty {
            if let module = linearByBias(index) {
                (scopes[index], evidence[index]) = (module, .linearBias)
            } else if let module = layerNorm2dModule(index, scopes: scopes, evidence: evidence) {
                (scopes[index], evidence[index]) = (module, .layerNorm2dPosition)
            } else if let module = quantizedConvBias(index, scopes: scopes) {
                (scopes[index], evidence[index]) = (module, .quantizedConvBias)
            }
        }
        return (scopes, evidence)
    }

    // MARK: - Rules

    /// The one module whose parameters the fx_node call names.
    func fxModule(_ node: ONNXNode) -> String? {
        guard let text = node.metadataProps["pkg.torch.onnx.fx_node"], let call = FXNodeCall(metadata: text) else { return nil }
        let modules = Set(call.parameterPlaceholders.compactMap { flattened.dotted($0).flatMap(Self.module(ofParameter:)) })
        return modules.count == 1 ? modules.first : nil
    }

    /// The one module whose named parameters the node reads (a Conv reading `X.weight` and `X.bias`).
    func namedInputModule(_ node: ONNXNode) -> String? {
        let modules = Set(node.inputs.filter { stored[$0] != nil }.compactMap { name -> String? in
            CanonicalNames.resolveParameter(name) == nil ? nil : Self.module(ofParameter: name)
        })
        return modules.count == 1 ? modules.first : nil
    }

    /// `MatMul(x, W)` whose output an Add combines with a stored tensor named `X.bias`: Linear `X`.
    func linearByBias(_ index: Int) -> String? {
        let node = nodes[index]
        guard node.opType == "MatMul", node.inputs.count == 2, stored[node.inputs[1]] != nil,
              CanonicalNames.resolveParameter(node.inputs[1]) == nil, let output = node.outputs.first else { return nil }
        let biases = Set((readers[output] ?? []).compactMap { reader -> String? in
            let add = nodes[reader.node]
            guard add.opType == "Add" else { return nil }
            return add.inputs.first { $0 != output && stored[$0] != nil && $0.hasSuffix(".bias") && CanonicalNames.resolveParameter($0) != nil }
        })
        guard biases.count == 1, let bias = biases.first else { return nil }
        return Self.module(ofParameter: bias)
    }

    /// LayerNorm2d's `weight[:, None, None] * x + bias[:, None, None]` folded to [C,1,1] constants.
    /// The Mul's other operand is the normalised map: walking back through the normalisation
    /// (which takes a ReduceMean) reaches the layer before it; upstream's LayerNorm2d always sits in
    /// a Sequential right after that layer. The Add's other operand is that Mul.
    /// ref: segment_anything/modeling/common.py LayerNorm2d.forward; mask_decoder.py output_upscaling,
    /// prompt_encoder.py mask_downscaling, image_encoder.py neck.
    func layerNorm2dModule(_ index: Int, scopes: [String], evidence: [ScopeEvidence?]) -> String? {
        let node = nodes[index]
        guard node.opType == "Mul" || node.opType == "Add", node.inputs.count == 2,
              let affine = node.inputs.firstIndex(where: { stored[$0].map(ONNXConsumerRules.isChannelColumn) ?? false }) else { return nil }
        let other = node.inputs[1 - affine]
        guard let producer = producers[other] else { return nil }
        // The bias added to the weighted map; or, where a tool dropped a multiply by ones, to the
        // normalised map itself.
        if node.opType == "Add", nodes[producer].opType == "Mul", evidence[producer] == .layerNorm2dPosition {
            return scopes[producer]
        }
        guard let previous = scopeBeforeNormalisation(from: producer, scopes: scopes) else { return nil }
        let parts = previous.split(separator: ".").map(String.init)
        guard let last = parts.last, let child = Int(last) else { return nil }
        return (parts.dropLast() + [String(child + 1)]).joined(separator: ".")
    }

    /// quantize_dynamic adds a Conv's float bias after rescaling the integer product:
    /// `Add(Mul(Cast(ConvInteger(...)), scale), Reshape(bias, shape))`. The Reshape takes the ConvInteger's module.
    func quantizedConvBias(_ index: Int, scopes: [String]) -> String? {
        let node = nodes[index]
        guard node.opType == "Reshape", let bias = node.inputs.first, stored[bias]?.count == 1,
              let output = node.outputs.first else { return nil }
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
        return convolutions.count == 1 ? convolutions.first : nil
    }

    /// The one scope found walking upstream from `start` through unscoped nodes, provided those
    /// nodes include a ReduceMean (the normalisation's mean).
    private func scopeBeforeNormalisation(from start: Int, scopes: [String]) -> String? {
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
        return passedMean && found.count == 1 ? found.first : nil
    }

    /// `a.b.weight` -> `a.b`.
    static func module(ofParameter path: String) -> String? {
        guard let dot = path.lastIndex(of: ".") else { return nil }
        return String(path[..<dot])
    }
}
