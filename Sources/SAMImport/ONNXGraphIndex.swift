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

    /// Why a graph without names could not be matched to the runtime's modules, when it could not.
    let structuralFailure: String?

    /// - Parameter smallConstant: the values of a stored tensor of a few elements (labels and
    ///   indices the structural match reads), or nil.
    init(_ graph: ONNXGraph, smallConstant: @escaping (String) -> [Double]? = { _ in nil }) {
        nodes = graph.nodes
        var readers: [String: [(node: Int, input: Int)]] = [:]
        for (index, node) in graph.nodes.enumerated() {
            for (input, name) in node.inputs.enumerated() where !name.isEmpty {
                readers[name, default: []].append((index, input))
            }
        }
        self.readers = readers
        // A scope that does not resolve to a SAM module (a wrapper's own forward) says nothing.
        let explicit = graph.nodes.map(ONNXScope.modulePath).map { CanonicalNames.resolve($0) == nil ? "" : $0 }
        if Self.isAnonymous(graph, explicitScopes: explicit) {
            let match = ONNXStructuralMatch(flow: ONNXDataFlow(graph: graph, readers: readers, smallConstant: smallConstant))
            var scopes = explicit
            for (node, scope) in match.scopes { scopes[node] = scope }
            self.scopes = scopes
            scopeEvidence = scopes.map { $0.isEmpty ? nil : .structure }
            candidateScopes = [:]
            structuralFailure = match.failure
        } else {
            let inferred = ONNXScopeInference(graph: graph, readers: readers).infer(explicit: explicit)
            (scopes, scopeEvidence, candidateScopes) = (inferred.scopes, inferred.evidence, inferred.ambiguous)
            structuralFailure = nil
        }
        canonicalScopes = scopes.map { $0.isEmpty ? nil : CanonicalNames.resolve($0) }
    }

    /// Nothing in the graph says which module a weight belongs to: no node scope, no fx_node
    /// metadata, no stored tensor under a PyTorch name. Only the structure is left.
    static func isAnonymous(_ graph: ONNXGraph, explicitScopes: [String]) -> Bool {
        explicitScopes.allSatisfy(\.isEmpty)
            && !graph.nodes.contains { $0.metadataProps["pkg.torch.onnx.fx_node"] != nil }
            && !(graph.initializers + graph.constants).contains { CanonicalNames.resolveParameter($0.name) != nil }
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
