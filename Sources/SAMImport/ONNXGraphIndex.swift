import SAMFormats

/// One place a value is read: node `nodeIndex`'s input number `input`.
struct ONNXUse {
    let nodeIndex: Int
    let input: Int
    let node: ONNXNode
    /// Module scope as exported or inferred ("" at the root), and its canonical form when it resolves.
    let scope: String
    let canonicalScope: CanonicalPath?
    /// How the scope was found when the exporter did not state it; nil when it did.
    let scopeEvidence: ScopeEvidence?
    /// Modules the scope rules could not decide between (no scope then).
    let candidateScopes: [String]

    /// "Add '/neck/neck.1/Add_1' input 1 (scope neck.1)", for messages.
    var text: String {
        let where_ = !scope.isEmpty ? "scope \(scope)"
            : candidateScopes.isEmpty ? "root scope" : "no scope: ambiguous between " + candidateScopes.joined(separator: ", ")
        return "\(node.opType) '\(node.name)' input \(input) (\(where_))"
    }
}

/// Who reads which value, with each node's module scope, looking through `Identity` nodes
/// (the TorchScript exporter dedups equal initializers and feeds the copies through Identity).
struct ONNXGraphIndex {
    let nodes: [ONNXNode]
    private let readers: [String: [(node: Int, input: Int)]]
    private let scopes: [String]
    private let scopeEvidence: [ScopeEvidence?]
    private let candidateScopes: [Int: [String]]
    private let canonicalScopes: [CanonicalPath?]

    /// Why a graph without names or node scopes could not be matched to the runtime's modules.
    let structuralFailure: String?
    /// Why the structure did not name what node scopes left open, in a graph whose initializers lost
    /// their names but whose nodes kept scopes (said with any tensor left unmapped).
    let structuralNote: String?

    /// - Parameter smallConstant: the values of a stored tensor of a few elements (labels and
    ///   indices the structural match reads), or nil.
    init(_ graph: ONNXGraph, smallConstant: @escaping (String) -> [Double]? = { _ in nil }) {
        nodes = graph.nodes
        var readers: [String: [(node: Int, input: Int)]] = [:]
        var producers: [String: Int] = [:]
        for (index, node) in graph.nodes.enumerated() {
            for (input, name) in node.inputs.enumerated() where !name.isEmpty {
                readers[name, default: []].append((index, input))
            }
            for output in node.outputs where !output.isEmpty { producers[output] = index }
        }
        self.readers = readers
        // A scope that does not resolve to a SAM module (a wrapper's own forward) says nothing.
        let explicit = graph.nodes.map(ONNXScope.modulePath).map { CanonicalNames.resolve($0) == nil ? "" : $0 }
        var scopes = explicit
        var evidence = [ScopeEvidence?](repeating: nil, count: graph.nodes.count)
        var failure: String?, note: String?
        if Self.namesGone(graph) {
            let match = ONNXStructuralMatch(flow: ONNXDataFlow(graph: graph, readers: readers, producers: producers,
                                                                  smallConstant: smallConstant))
            if explicit.allSatisfy(\.isEmpty) {
                failure = match.failure
            } else {
                // Node scopes stay the evidence; the structure only fills the root scope's gaps, and only
                // when it agrees with every node scope the exporter wrote.
                note = match.failure ?? Self.conflict(match.scopes, explicit)
            }
            if failure == nil && note == nil {
                for (node, scope) in match.scopes where scopes[node].isEmpty {
                    (scopes[node], evidence[node]) = (scope, .structure)
                }
            }
        }
        (structuralFailure, structuralNote) = (failure, note)
        if failure != nil {
            (self.scopes, scopeEvidence, candidateScopes) = (scopes, evidence, [:])
        } else {
            let inferred = ONNXScopeInference(graph: graph, readers: readers, producers: producers).infer(explicit: scopes, evidence: evidence)
            (self.scopes, scopeEvidence, candidateScopes) = (inferred.scopes, inferred.evidence, inferred.ambiguous)
        }
        canonicalScopes = self.scopes.map { $0.isEmpty ? nil : CanonicalNames.resolve($0) }
    }

    /// No stored tensor keeps a PyTorch name and no node carries fx_node metadata: what names the
    /// weights is node scopes, if any are left, and the structure.
    static func namesGone(_ graph: ONNXGraph) -> Bool {
        !graph.nodes.contains { $0.metadataProps["pkg.torch.onnx.fx_node"] != nil }
            && !(graph.initializers + graph.constants).contains { CanonicalNames.resolveParameter($0.name) != nil }
    }

    /// The first node whose exported scope and structural module are not one inside the other
    /// (a fused BatchNorm's `X.bn` counts as `X.c`), as a message; nil when all agree.
    static func conflict(_ structural: [Int: String], _ explicit: [String]) -> String? {
        for (node, module) in structural.sorted(by: { $0.key < $1.key }) where !explicit[node].isEmpty {
            guard let exported = CanonicalNames.resolve(ONNXConsumerRules.convModule(explicit[node]))?.path else { continue }
            if !(exported == module || exported.hasPrefix(module + ".") || module.hasPrefix(exported + ".")) {
                return "node \(node)'s scope says \(exported) where the structure places \(module)"
            }
        }
        return nil
    }

    /// Every non-Identity read of `value`, following Identity outputs.
    func uses(of value: String) -> [ONNXUse] {
        var result: [ONNXUse] = []
        var pending = [value], seen: Set<String> = [value]
        while let current = pending.popLast() {
            for (nodeIndex, input) in readers[current] ?? [] {
                let node = nodes[nodeIndex]
                if node.opType == "Identity" {
                    for output in node.outputs where seen.insert(output).inserted { pending.append(output) }
                    continue
                }
                result.append(ONNXUse(nodeIndex: nodeIndex, input: input, node: node, scope: scopes[nodeIndex],
                                      canonicalScope: canonicalScopes[nodeIndex], scopeEvidence: scopeEvidence[nodeIndex],
                                      candidateScopes: candidateScopes[nodeIndex] ?? []))
            }
        }
        return result.sorted { ($0.nodeIndex, $0.input) < ($1.nodeIndex, $1.input) }
    }

    /// Nodes reachable from `value` through ops that only move or repeat data, up to `depth` hops
    /// (how a constant-folded dense PE reaches the transformer: repeat_interleave, flatten, permute).
    func dataMovementReach(from value: String, depth: Int = 8) -> [ONNXUse] {
        let movers: Set<String> = ["Tile", "Expand", "Reshape", "Flatten", "Transpose", "Unsqueeze", "Squeeze", "Cast"]
        var reached: [ONNXUse] = []
        var frontier = [value], seen: Set<String> = [value]
        for _ in 0..<depth where !frontier.isEmpty {
            var next: [String] = []
            for current in frontier {
                for use in uses(of: current) {
                    reached.append(use)
                    if movers.contains(use.node.opType), use.input == 0 {
                        for output in use.node.outputs where seen.insert(output).inserted { next.append(output) }
                    }
                }
            }
            frontier = next
        }
        return reached
    }

    /// Node `index`'s module scope, as exported or inferred ("" when unknown).
    func scope(ofNode index: Int) -> String { scopes[index] }

    /// Components named by any node scope of the graph.
    var scopeComponents: Set<SAMComponent> { Set(canonicalScopes.compactMap { $0?.component }) }
}
