import SAMFormats

/// ONNX's type constraints (`ONNXOperatorTypes`) held on the nodes whose stored inputs the importer
/// interprets, as onnx.checker and onnxruntime hold them: every input whose element type is known
/// without running the graph, and every type-naming attribute, must be a type the operator allows at
/// the file's opset, and all that share a type variable must agree. A zero point stored as int32
/// against int8 data, or a ConvInteger weight stored as int32, is refused here; read, it would make
/// wrong weights.
extension ONNXWeightMapper {
    func checkOperatorTypes() throws(ImportError) {
        let opset = model.opsetImports.first { $0.domain.isEmpty || $0.domain == "ai.onnx" }?.version
        // Types known before running the graph: stored tensors, then what the checked operators and
        // Identity make of them, in graph order (ONNX's: producers first; a value read before the
        // node that makes it is not checked).
        var known: [String: KnownElementType] = [:]
        for stored in model.storedTensors { known[stored.name] = KnownElementType(type: stored.elementType, producer: nil) }
        for (index, node) in model.graph.nodes.enumerated() {
            if node.opType == "Identity" {
                if let input = node.inputs.first, let type = known[input]?.type, let output = node.outputs.first, known[output] == nil {
                    known[output] = KnownElementType(type: type, producer: "\(node.described(at: index)) of '\(input)'")
                }
                continue
            }
            // The importer matches op types in any domain; another domain's node is held to ai.onnx's newest types.
            let defaultDomain = node.domain.isEmpty || node.domain == "ai.onnx"
            let nodeOpset = defaultDomain ? opset : nil
            let check = NodeTypeCheck(node: node, index: index, opset: nodeOpset, file: file)
            switch ONNXOperatorTypes.lookup(node.opType, opset: nodeOpset) {
            case .unlisted:
                continue
            case .notYetDefined(let since):
                throw check.error(nil, "is not an operator \(check.opsetText): ai.onnx has \(node.opType) from opset \(since)")
            case .defined(let types):
                try check.run(types, known: &known)
            }
        }
    }
}

/// An element type known without running the graph; `producer` names the node that makes it ("Cast
/// '/x/Cast'"), nil for a stored tensor.
private struct KnownElementType {
    let type: ONNXElementType
    let producer: String?
}

/// One node held to one version of its operator's constraints.
private struct NodeTypeCheck {
    let node: ONNXNode
    let index: Int
    let opset: Int64?
    let file: String

    /// Each type variable's type, and which input or attribute bound it first.
    private typealias Binding = (type: ONNXElementType, by: String)

    func run(_ types: ONNXOperatorTypes, known: inout [String: KnownElementType]) throws(ImportError) {
        var bound: [String: Binding] = [:]
        for (position, value) in node.inputs.enumerated() where !value.isEmpty && position < types.inputs.count {
            guard let input = known[value] else { continue }
            let (name, variable) = types.inputs[position]
            let what = "input \(position) (\(name)) '\(value)'" + (input.producer.map { " (the output of \($0))" } ?? "")
            try bind(variable, input.type, what: what, tensor: input.producer == nil ? value : nil, types: types, bound: &bound)
        }
        for attribute in types.typeAttributes {
            guard let type = try attributeType(attribute.name, required: attribute.required) else { continue }
            try bind(attribute.variable, type, what: "attribute \(attribute.name)", tensor: nil, types: types, bound: &bound)
        }
        // An output's type is its variable's binding, or the one type the variable allows.
        for (position, output) in node.outputs.enumerated() where !output.isEmpty && position < types.outputs.count {
            let variable = types.outputs[position]
            let only = types.allowed[variable].flatMap { $0.count == 1 ? $0.first.map(ONNXElementType.init(code:)) : nil }
            guard known[output] == nil, let type = bound[variable]?.type ?? only else { continue }
            known[output] = KnownElementType(type: type, producer: nodeText)
        }
    }

    private func bind(_ variable: String, _ type: ONNXElementType, what: String, tensor: String?,
                      types: ONNXOperatorTypes, bound: inout [String: Binding]) throws(ImportError) {
        let allowed = types.allowed[variable]
        if let allowed, !allowed.contains(type.code) {
            throw error(tensor, "\(what) is \(type.name); \(node.opType) \(opsetText) allows \(Self.list(allowed)) there")
        }
        if let first = bound[variable], first.type != type {
            throw error(tensor, "\(what) is \(type.name), but \(first.by) is \(first.type.name): inputs of type \(variable) must "
                            + "have one type (\(variable) is \(allowed.map(Self.list) ?? "any type") \(opsetText))")
        }
        if bound[variable] == nil { bound[variable] = (type, what) }
    }

    /// The element type an attribute names (an int code; Cast-1's type name) or holds (a tensor);
    /// nil when an optional one is absent or 0 (unset).
    private func attributeType(_ name: String, required: Bool) throws(ImportError) -> ONNXElementType? {
        switch node.attribute(name) {
        case nil:
            if required { throw error(nil, "has no \(name) attribute; \(node.opType) requires one") }
            return nil
        case .int(let code)?:
            if code == 0 && !required { return nil }
            guard let code = Int32(exactly: code) else { throw error(nil, "attribute \(name) is \(code), not an ONNX element type") }
            return ONNXElementType(code: code)
        case .string(let text)?:
            guard let type = ONNXElementType(name: text) else { throw error(nil, "attribute \(name) is '\(text)', not an ONNX element type") }
            return type
        case .tensor(let type, _)?:
            return type
        case .some:
            throw error(nil, "attribute \(name) is neither an element type code nor a tensor")
        }
    }

    var nodeText: String { node.described(at: index) }

    var opsetText: String { opset.map { "at opset \($0)" } ?? "at ai.onnx's newest opset" }

    func error(_ tensor: String?, _ message: String) -> ImportError {
        ImportError(.invalidOperatorTypes, file: file, tensor: tensor, "\(nodeText) \(message)")
    }

    private static func list(_ codes: [Int32]) -> String {
        let names = codes.map { ONNXElementType(code: $0).name }
        return names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1]
    }
}

private extension ONNXNode {
    /// "DequantizeLinear 'neck.0.weight_DequantizeLinear'", or "Cast node 12" when it has no name.
    func described(at index: Int) -> String { name.isEmpty ? "\(opType) node \(index)" : "\(opType) '\(name)'" }
}
