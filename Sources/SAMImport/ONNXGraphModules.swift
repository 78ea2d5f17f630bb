import SAMFormats

/// What a group of weight-reading nodes computes, told from op types and data flow alone.
enum StructuralKind: String, Hashable, Sendable {
    /// q, k and v projections reading one value, a softmax, an output projection.
    case selfAttention = "self-attention"
    /// q reading one value, k and v another.
    case crossAttention = "cross-attention"
    /// One `qkv` projection for all three, an output `proj` (encoder blocks).
    case fusedAttention = "attention with fused qkv"
    /// A stored [1, H, W, C] added to the patch embedding (ViT's absolute `pos_embed`).
    case positionEmbedding = "absolute position embedding"
    case linear = "Linear"
    case layerNorm = "LayerNorm"
    case conv = "Conv2d"
    case convTranspose = "ConvTranspose2d"
    /// LayerNorm2d's per-channel `weight[:, None, None] * x + bias[:, None, None]`.
    case channelAffine = "LayerNorm2d"
    /// `coords @ G` with G [2, n] (PositionEmbeddingRandom).
    case gaussianMatrix = "positional Gaussian matrix"
    /// A [1, C] embedding added where the point label equals a constant.
    case pointEmbedding = "point embedding"
}

/// What tells apart modules of one kind that the data flow alone leaves interchangeable.
enum StructuralRole: Hashable, Sendable, CustomStringConvertible {
    case none
    /// The point label the embedding is added for (-1: not a point).
    case label(Int)
    /// The decoder token the Linear reads (`hs[:, i, :]`; 0 is the IoU token).
    case token(Int)

    var description: String {
        switch self {
        case .none: ""
        case .label(let value): " for label \(value)"
        case .token(let value): " reading output token \(value)"
        }
    }
}

/// One module found in the graph: its weight-reading nodes, each with the child path its
/// weights take under the module (`q_proj` in an attention, "" for the module itself).
struct GraphModule {
    let kind: StructuralKind
    let role: StructuralRole
    let nodes: [(node: Int, child: String)]
}

/// Groups a graph's weight-reading nodes into the modules SAM's decoder side is made of.
/// ref: segment_anything/modeling/transformer.py Attention.forward, TwoWayAttentionBlock.forward;
/// mask_decoder.py MLP, MaskDecoder.predict_masks; common.py LayerNorm2d; prompt_encoder.py.
struct ONNXGraphModules {
    let flow: ONNXDataFlow
    private(set) var modules: [GraphModule] = []
    var claimed: Set<Int> = []

    init(flow: ONNXDataFlow) {
        self.flow = flow
        findAttention()
        findLinears()
        findNorms()
        findConvolutions()
        findPointEmbeddings()
        if modules.contains(where: { $0.kind == .fusedAttention }) { findPositionEmbedding() }
    }

    mutating func add(_ kind: StructuralKind, _ role: StructuralRole = .none, _ nodes: [(node: Int, child: String)]) {
        modules.append(GraphModule(kind: kind, role: role, nodes: nodes))
        claimed.formUnion(nodes.map(\.node))
    }

    /// A Linear node with its bias Add, under `child`.
    func linearNodes(_ index: Int, child: String) -> [(node: Int, child: String)] {
        [(index, child)] + (flow.biasAdd(after: index).map { [($0, child)] } ?? [])
    }

    /// Linears outside the attention: MLP layers, or the positional Gaussian matrix ([2, n]).
    private mutating func findLinears() {
        for index in flow.nodes.indices where flow.isLinear(index) && !claimed.contains(index) {
            if flow.storedInput(index, 1)?.first == 2 && flow.nodes[index].opType == "MatMul" {
                // The points' product and the dense PE grid's (a constant grid unless folded) share it.
                let matrix = flow.nodes[index].inputs[1]
                let products = (flow.readers[matrix] ?? []).filter { flow.nodes[$0.node].opType == "MatMul" && $0.input == 1 }
                add(.gaussianMatrix, .none, products.map { ($0.node, "") })
            } else {
                add(.linear, tokenRead(by: index).map(StructuralRole.token) ?? .none, linearNodes(index, child: ""))
            }
        }
    }

    /// Which decoder token a Linear reads: `hs[:, i, :]`, possibly a select inside a slice
    /// (`hs[:, 1:5, :][:, i, :]`), as Gather / Slice on axis 1 with constant indices.
    private func tokenRead(by linear: Int) -> Int? {
        var current = flow.nodes[linear].inputs[0], offset = 0, selected = false
        for _ in 0..<6 {
            guard let index = flow.producers[current] else { break }
            let node = flow.nodes[index]
            if node.opType == "Gather", axis(of: node) == 1, let position = flow.integerConstant(index, 1) {
                offset += position
                selected = true
            } else if node.opType == "Slice", let start = sliceStart(index) {
                offset += start
            } else if !["Squeeze", "Cast", "Identity"].contains(node.opType) {
                break
            }
            guard let first = node.inputs.first else { break }
            current = first
        }
        return selected ? offset : nil
    }

    private func axis(of node: ONNXNode) -> Int {
        if case .int(let value)? = node.attribute("axis") { return Int(value) }
        return 0
    }

    /// The start of a Slice on axis 1 only (constant starts and axes), else nil.
    private func sliceStart(_ index: Int) -> Int? {
        let node = flow.nodes[index]
        guard node.inputs.count >= 4, let starts = flow.smallConstant(node.inputs[1]), let axes = flow.smallConstant(node.inputs[3]),
              starts.count == 1, axes == [1], let start = starts.first, start >= 0 else { return nil }
        return Int(start)
    }

    /// LayerNormalization nodes, and LayerNorm decomposed into `Mul(x_hat, w) + b` with 1-D w and b
    /// (opset < 17); LayerNorm2d's [C,1,1] affine pairs.
    private mutating func findNorms() {
        for index in flow.nodes.indices where !claimed.contains(index) {
            let node = flow.nodes[index]
            if node.opType == "LayerNormalization", flow.storedInput(index, 1) != nil {
                add(.layerNorm, .none, [(index, "")])
                continue
            }
            guard node.opType == "Mul", node.inputs.count == 2,
                  let weight = (0..<2).first(where: { flow.storedInput(index, $0).map(Self.isAffineShape) ?? false }),
                  let shape = flow.storedInput(index, weight), !flow.isStored(node.inputs[1 - weight]) else { continue }
            let bias = flow.biasAdd(after: index) ?? channelBiasAdd(after: index, shape: shape)
            add(shape.count == 1 ? .layerNorm : .channelAffine, .none, [(index, "")] + (bias.map { [($0, "")] } ?? []))
        }
        // A norm whose multiply by ones a graph optimiser removed: only its bias is left. Matched
        // all the same, so the missing weight is reported under its own name.
        for index in flow.nodes.indices where !claimed.contains(index) && flow.nodes[index].opType == "Add" {
            let node = flow.nodes[index]
            guard node.inputs.count == 2, let bias = (0..<2).first(where: { flow.storedInput(index, $0).map(Self.isAffineShape) ?? false }),
                  !flow.isStored(node.inputs[1 - bias]), let shape = flow.storedInput(index, bias) else { continue }
            add(shape.count == 1 ? .layerNorm : .channelAffine, .none, [(index, "")])
        }
    }

    /// [C] (LayerNorm) or [C,1,1] (LayerNorm2d), C > 1.
    static func isAffineShape(_ shape: [Int]) -> Bool {
        (shape.count == 1 && shape[0] > 1) || ONNXConsumerRules.isChannelColumn(shape)
    }

    private func channelBiasAdd(after index: Int, shape: [Int]) -> Int? {
        guard shape.count == 3, let output = flow.nodes[index].outputs.first else { return nil }
        return (flow.readers[output] ?? []).first { reader in
            flow.nodes[reader.node].opType == "Add" && flow.storedInput(reader.node, 1 - reader.input) == shape
        }?.node
    }

    private mutating func findConvolutions() {
        for index in flow.nodes.indices where !claimed.contains(index) && flow.storedInput(index, 1)?.count == 4 {
            switch flow.nodes[index].opType {
            case "Conv": add(.conv, .none, [(index, "")])
            case "ConvTranspose": add(.convTranspose, .none, [(index, "")])
            default: break
            }
        }
    }

    /// ViT's `x = x + pos_embed`: a stored [1, H, W, C] (H = W) added to the patch embedding.
    private mutating func findPositionEmbedding() {
        for index in flow.nodes.indices where !claimed.contains(index) && flow.nodes[index].opType == "Add" {
            let node = flow.nodes[index]
            guard node.inputs.count == 2, let table = (0..<2).first(where: { flow.storedInput(index, $0).map { $0.count == 4 && $0[0] == 1 && $0[1] == $0[2] } ?? false }),
                  !flow.isStored(node.inputs[1 - table]) else { continue }
            add(.positionEmbedding, .none, [(index, "")])
        }
    }

    /// [1, C] stored rows combined with a value selected by `labels == constant`: multiplied by
    /// the comparison (`SamOnnxModel._embed_points`), added or assigned where it holds
    /// (`PromptEncoder._embed_points`).
    private mutating func findPointEmbeddings() {
        for index in flow.nodes.indices where !claimed.contains(index) {
            let node = flow.nodes[index]
            let flow = flow
            let isRow = { (input: Int) in flow.storedInput(index, input).map { $0.count == 2 && $0[0] == 1 && $0[1] > 1 } ?? false }
            if node.opType == "Where", node.inputs.count == 3, isRow(1) || isRow(2),
               let label = equalConstant(from: node.inputs[0]) {
                // point_embedding[labels == -1] = not_a_point_embed.weight, exported as Where(labels == -1, row, x).
                add(.pointEmbedding, .label(label), [(index, "")])
                continue
            }
            guard ["Mul", "Add"].contains(node.opType), node.inputs.count == 2, let row = (0..<2).first(where: isRow),
                  let label = comparedLabel(index, other: node.inputs[1 - row]) else { continue }
            add(.pointEmbedding, .label(label), [(index, "")])
        }
    }

    /// The constant an `Equal` compares against, reached forward through a `Where` that selects
    /// this node's sum, or backward through the mask this node multiplies by.
    private func comparedLabel(_ index: Int, other: String) -> Int? {
        if let output = flow.nodes[index].outputs.first {
            for reader in flow.readers[output] ?? [] where flow.nodes[reader.node].opType == "Where" && reader.input > 0 {
                if let label = equalConstant(from: flow.nodes[reader.node].inputs[0]) { return label }
            }
        }
        return flow.nodes[index].opType == "Mul" ? equalConstant(from: other) : nil
    }

    private func equalConstant(from value: String) -> Int? {
        var current = value
        for _ in 0..<5 {
            guard let index = flow.producers[current] else { return nil }
            let node = flow.nodes[index]
            if node.opType == "Equal", node.inputs.count == 2 {
                return flow.integerConstant(index, 1) ?? flow.integerConstant(index, 0)
            }
            guard ["Cast", "Unsqueeze", "Reshape", "Expand"].contains(node.opType), let first = node.inputs.first else { return nil }
            current = first
        }
        return nil
    }
}
