import SAMFormats

/// Module scopes for a graph whose names and metadata are all gone (initializers renamed, node
/// names and `metadata_props` dropped, nodes re-sorted): each module the runtime expects, in
/// forward order, takes the one graph module of its kind (and role) whose inputs depend only on
/// modules already taken. Where none or several fit, matching stops with an error that lists
/// them: an order is never guessed. The module orders cover SAM's prompt encoder and mask
/// decoder (the official decoder and the split pair), MobileSAM's TinyViT and SAM's ViT encoders.
struct ONNXStructuralMatch {
    /// The module path of each node that reads weights, by node index.
    private(set) var scopes: [Int: String] = [:]
    /// Why matching stopped, when it did.
    private(set) var failure: String?

    init(flow: ONNXDataFlow) {
        let found = ONNXGraphModules(flow: flow)
        let modules = found.modules
        guard !modules.isEmpty else { return }
        // One bit per module per node: bounded (SAM ViT-H: about 200 modules, 8000 nodes).
        guard modules.count <= Self.moduleLimit, modules.count * flow.nodes.count <= Self.ancestryBitLimit else {
            failure = "\(modules.count) weight modules in \(flow.nodes.count) nodes: too large to match by structure"
            return
        }
        let order = flow.topologicalOrder()
        let expected: [ExpectedModule]
        switch Self.expectedOrder(modules, flow: flow, order: order) {
        case .success(let order): expected = order
        case .failure(let reason):
            failure = reason.message
            return
        }
        let ancestors = Self.moduleAncestors(modules, flow: flow, order: order)
        // A module is ready once every module it depends on is taken.
        var untakenAncestors = ancestors.map(\.count)
        var descendants = [[Int]](repeating: [], count: modules.count)
        for (index, set) in ancestors.enumerated() {
            for ancestor in set { descendants[ancestor].append(index) }
        }
        var taken = [Bool](repeating: false, count: modules.count)
        for (position, module) in expected.enumerated() {
            let candidates = modules.indices.filter { index in
                !taken[index] && untakenAncestors[index] == 0 && modules[index].kind == module.kind
                    && modules[index].role == module.role
            }
            guard candidates.count == 1, let match = candidates.first else {
                let listed = candidates.map { Self.describe(modules[$0], flow: flow) }
                failure = "expected \(module) as module \(position + 1) of \(expected.count), and "
                    + (candidates.isEmpty ? "no module of the graph fits there"
                        : "\(candidates.count) fit: " + listed.joined(separator: "; "))
                return
            }
            taken[match] = true
            for descendant in descendants[match] { untakenAncestors[descendant] -= 1 }
            for (node, child) in modules[match].nodes { scopes[node] = child.isEmpty ? module.path : module.path + "." + child }
        }
        if let left = modules.indices.first(where: { !taken[$0] }) {
            failure = "the graph has a \(modules[left].kind.rawValue) that SAM's module order has no place for "
                + "(SAM 2 graphs are matched by name only): \(Self.describe(modules[left], flow: flow))"
            scopes = [:]
        }
    }

    /// 2^31 bits, 256 MiB.
    static let ancestryBitLimit = 1 << 31
    /// Far above any SAM model's count, low enough that matching stays quadratic at worst.
    static let moduleLimit = 10_000

    struct Refusal: Error { let message: String }

    /// The expected order for the components the modules show, with counts read off the graph
    /// (`order`: the graph's nodes, producers first).
    static func expectedOrder(_ modules: [GraphModule], flow: ONNXDataFlow, order: [Int]) -> Result<[ExpectedModule], Refusal> {
        if modules.contains(where: { $0.kind == .fusedAttention }) { return encoderOrder(modules, flow: flow, order: order) }
        let attention = modules.filter { $0.kind == .selfAttention || $0.kind == .crossAttention }.count
        let pointEmbeddings = modules.filter { if case .label(let value) = $0.role { value >= 0 } else { false } }.count
        let maskTokens = modules.filter { if case .token(let value) = $0.role { value >= 1 } else { false } }.count
        var order: [ExpectedModule] = []
        if modules.contains(where: { $0.kind == .gaussianMatrix }) {
            order += SAMDecoderModuleOrder.promptEncoder(pointEmbeddings: pointEmbeddings, masks: modules.contains { $0.kind == .conv })
        }
        if attention > 0 {
            // Three attentions per two-way block and one final token-to-image attention.
            guard attention % 3 == 1 else {
                return .failure(Refusal(message: "\(attention) attention modules: a SAM mask decoder has 3 per block plus 1"))
            }
            order += SAMDecoderModuleOrder.maskDecoder(depth: attention / 3, maskTokens: maskTokens)
        }
        guard !order.isEmpty else {
            return .failure(Refusal(message: "no structure of a SAM or MobileSAM encoder, prompt encoder or mask decoder found (SAM 2 graphs are matched by name only)"))
        }
        return .success(order)
    }

    /// A ViT (absolute positions added, one attention per block) or a TinyViT (a convolutional
    /// stage, then attention stages told apart by their `qkv` shape, in graph order).
    static func encoderOrder(_ modules: [GraphModule], flow: ONNXDataFlow, order: [Int]) -> Result<[ExpectedModule], Refusal> {
        let attention = modules.filter { $0.kind == .fusedAttention }
        if modules.contains(where: { $0.kind == .positionEmbedding }) {
            return .success(SAMEncoderModuleOrder.vit(depth: attention.count))
        }
        let position = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
        var stageShapes: [[Int]] = [], depths: [[Int]: Int] = [:]
        for module in attention.sorted(by: { (position[$0.nodes[0].node] ?? .max) < (position[$1.nodes[0].node] ?? .max) }) {
            let shape = flow.storedInput(module.nodes[0].node, 1) ?? []
            if depths[shape] == nil { stageShapes.append(shape) }
            depths[shape, default: 0] += 1
        }
        // patch embedding 2, MBConv 3 each, PatchMerging 3 per stage but the last, one local conv
        // per attention block, neck 2.
        let convolutions = modules.filter { $0.kind == .conv }.count
        let blockConvolutions = convolutions - 2 - 3 * stageShapes.count - attention.count - 2
        guard blockConvolutions > 0, blockConvolutions % 3 == 0 else {
            return .failure(Refusal(message: "\(convolutions) convolutions and \(attention.count) attention blocks in "
                                    + "\(stageShapes.count) stages do not make a TinyViT (Hiera encoders are matched by name only)"))
        }
        return .success(SAMEncoderModuleOrder.tinyViT(convolutionalBlocks: blockConvolutions / 3,
                                                      attentionStageDepths: stageShapes.map { depths[$0, default: 0] }))
    }

    /// For each module, the other modules whose outputs its weight-reading nodes depend on: one
    /// bit per module, carried along the graph in topological order.
    static func moduleAncestors(_ modules: [GraphModule], flow: ONNXDataFlow, order: [Int]) -> [Set<Int>] {
        var moduleOfNode: [Int: Int] = [:]
        for (index, module) in modules.enumerated() {
            for (node, _) in module.nodes { moduleOfNode[node] = index }
        }
        let words = (modules.count + 63) / 64
        var upstream = [UInt64](repeating: 0, count: flow.nodes.count * words)
        for index in order {
            for input in flow.nodes[index].inputs {
                guard let producer = flow.producers[input] else { continue }
                for word in 0..<words { upstream[index * words + word] |= upstream[producer * words + word] }
                if let module = moduleOfNode[producer] { upstream[index * words + module / 64] |= 1 << UInt64(module % 64) }
            }
        }
        return modules.indices.map { index in
            var set: Set<Int> = []
            for (node, _) in modules[index].nodes {
                for module in modules.indices where upstream[node * words + module / 64] & (1 << UInt64(module % 64)) != 0 {
                    set.insert(module)
                }
            }
            set.remove(index)
            return set
        }
    }

    /// "cross-attention reading t12, t13, ... (nodes 40, 41, ...)", for messages.
    static func describe(_ module: GraphModule, flow: ONNXDataFlow) -> String {
        let weights = module.nodes.flatMap { flow.nodes[$0.node].inputs.filter(flow.isStored) }
        let nodes = module.nodes.map { flow.nodes[$0.node].name.isEmpty ? "#\($0.node)" : "'\(flow.nodes[$0.node].name)'" }
        return "\(module.kind.rawValue)\(module.role) reading \(weights.prefix(4).joined(separator: ", "))"
            + (weights.count > 4 ? ", ..." : "") + " (nodes \(nodes.prefix(4).joined(separator: ", "))\(nodes.count > 4 ? ", ..." : ""))"
    }
}
