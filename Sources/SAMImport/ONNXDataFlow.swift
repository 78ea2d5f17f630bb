import SAMFormats

/// Who produces and who reads each value of a graph, which values are stored tensors, and the
/// small integer constants the structural rules read (a label compared against, a token index).
/// Nothing here uses a name as evidence: only op types, data flow and stored shapes.
struct ONNXDataFlow {
    let nodes: [ONNXNode]
    /// Stored tensors (initializers and Constant outputs) by name, with their shapes.
    let stored: [String: [Int]]
    let producers: [String: Int]
    let readers: [String: [(node: Int, input: Int)]]
    /// The values of a stored tensor of at most a few elements, or nil.
    let smallConstant: (String) -> [Double]?

    init(graph: ONNXGraph, readers: [String: [(node: Int, input: Int)]], producers: [String: Int],
         smallConstant: @escaping (String) -> [Double]?) {
        nodes = graph.nodes
        var stored: [String: [Int]] = [:]
        for tensor in graph.initializers + graph.constants { stored[tensor.name] = tensor.shape }
        // The TorchScript exporter feeds deduplicated initializers through Identity nodes.
        var pending = Array(stored.keys)
        while let value = pending.popLast() {
            for reader in readers[value] ?? [] {
                let node = graph.nodes[reader.node]
                guard node.opType == "Identity", node.outputs.count == 1, stored[node.outputs[0]] == nil else { continue }
                stored[node.outputs[0]] = stored[value]
                pending.append(node.outputs[0])
            }
        }
        self.stored = stored
        self.producers = producers
        self.readers = readers
        self.smallConstant = smallConstant
    }

    func isStored(_ value: String) -> Bool { stored[value] != nil }

    /// The stored input of node `index` at position `input`, with its shape.
    func storedInput(_ index: Int, _ input: Int) -> [Int]? {
        let node = nodes[index]
        guard input < node.inputs.count else { return nil }
        return stored[node.inputs[input]]
    }

    /// A node that multiplies by a stored 2-D matrix: `MatMul(x, W)`, `Gemm(x, W, b)`, `MatMulInteger(x, W)`.
    func isLinear(_ index: Int) -> Bool {
        ["MatMul", "Gemm", "MatMulInteger"].contains(nodes[index].opType) && storedInput(index, 1)?.count == 2
            && !isStored(nodes[index].inputs[0])
    }

    /// The Add that puts a stored 1-D bias on node `index`'s output (a Linear's `+ b`), if any.
    func biasAdd(after index: Int) -> Int? {
        guard let output = nodes[index].outputs.first else { return nil }
        return (readers[output] ?? []).first { reader in
            let add = nodes[reader.node]
            return add.opType == "Add" && add.inputs.count == 2 && storedInput(reader.node, 1 - reader.input)?.count == 1
        }?.node
    }

    /// Ops a projection's output passes through on its way to the attention products
    /// (`_separate_heads`, `_recombine_heads`, a scale, precision casts).
    static let reshapingOps: Set<String> = ["Reshape", "Transpose", "Cast", "Unsqueeze", "Squeeze", "Identity", "Flatten"]

    /// Walks from `value` back to the Linear that made it, through reshaping ops, a scale
    /// (Mul/Div by a stored scalar) and a bias Add; nil when anything else is in the way.
    func linearProducing(_ value: String) -> Int? {
        var current = value
        for _ in 0..<16 {
            guard let index = producers[current] else { return nil }
            let node = nodes[index]
            if isLinear(index) { return index }
            guard let first = node.inputs.first else { return nil }
            switch node.opType {
            case _ where Self.reshapingOps.contains(node.opType):
                current = first
            case "Split", "Slice", "Gather":
                // One of q, k, v taken from a fused qkv projection's output (never a stored table).
                guard !isStored(first) else { return nil }
                current = first
            case "Mul", "Div", "Add":
                guard node.inputs.count == 2, let other = (0..<2).first(where: { !isStored(node.inputs[$0]) }),
                      isStored(node.inputs[1 - other]) else { return nil }
                current = node.inputs[other]
            default:
                return nil
            }
        }
        return nil
    }

    /// Walks from `value` forward to the Linear that reads it as its input, through reshaping ops
    /// only (`_recombine_heads` then `out_proj`); nil when the value branches or meets anything
    /// else. `Shape` reads (TorchScript computes reshape targets from them) carry no data.
    func linearReading(_ value: String) -> Int? {
        var current = value
        for _ in 0..<8 {
            let uses = (readers[current] ?? []).filter { nodes[$0.node].opType != "Shape" }
            guard uses.count == 1, let use = uses.first else { return nil }
            if isLinear(use.node), use.input == 0 { return use.node }
            guard Self.reshapingOps.contains(nodes[use.node].opType), use.input == 0,
                  let output = nodes[use.node].outputs.first else { return nil }
            current = output
        }
        return nil
    }

    /// The product of two computed values (`q @ k^T`, `attn @ v`).
    func isActivationProduct(_ index: Int) -> Bool {
        let node = nodes[index]
        return node.opType == "MatMul" && node.inputs.count == 2 && !isStored(node.inputs[0]) && !isStored(node.inputs[1])
    }

    /// An integer scalar constant read by node `index` at `input` (a Gather index, an Equal operand).
    func integerConstant(_ index: Int, _ input: Int) -> Int? {
        let node = nodes[index]
        guard input < node.inputs.count, let values = smallConstant(node.inputs[input]), values.count == 1,
              let value = values.first, value == value.rounded(), abs(value) < 1e6 else { return nil }
        return Int(value)
    }

    /// Node indices in an order where every producer comes before its readers (ONNX requires
    /// graphs to be sorted so; this does not rely on it).
    func topologicalOrder() -> [Int] {
        var waiting = nodes.map { node in Set(node.inputs.filter { producers[$0] != nil }) }
        var ready = waiting.indices.filter { waiting[$0].isEmpty }.reversed() as [Int]
        var order: [Int] = []
        order.reserveCapacity(nodes.count)
        while let index = ready.popLast() {
            order.append(index)
            for output in nodes[index].outputs where !output.isEmpty {
                for reader in readers[output] ?? [] where waiting[reader.node].remove(output) != nil && waiting[reader.node].isEmpty {
                    ready.append(reader.node)
                }
            }
        }
        return order
    }
}
