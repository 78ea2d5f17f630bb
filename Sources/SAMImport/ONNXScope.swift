import SAMFormats

/// The PyTorch module a node was exported from, as the exporter wrote it (maybe under a
/// wrapper prefix; `CanonicalNames.resolve` makes it canonical).
enum ONNXScope {
    /// "" for the exported module's own forward (or no scope information).
    static func modulePath(of node: ONNXNode) -> String {
        if node.name.hasPrefix("/") { return torchScriptPath(node.name) }
        if let scopes = node.metadataProps["pkg.torch.onnx.name_scopes"], let path = dynamoPath(nameScopes: scopes) { return path }
        if let namespace = node.metadataProps["namespace"] { return dynamoPath(namespace: namespace) }
        return ""
    }

    /// TorchScript-based export: node names are `/<scope>/.../<Op>`. Drop the op; a segment that
    /// starts with the previous one + "." replaces it (Sequential children are named `seq.0`
    /// under `seq`): `/patch_embed/seq/seq.0/c/Conv` -> `patch_embed.seq.0.c`.
    static func torchScriptPath(_ nodeName: String) -> String {
        var segments = nodeName.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !segments.isEmpty else { return "" }
        segments.removeLast()
        var path: [String] = []
        for segment in segments {
            if let last = path.last, segment.hasPrefix(last + ".") {
                path[path.count - 1] = segment
            } else {
                path.append(segment)
            }
        }
        return path.joined(separator: ".")
    }

    /// dynamo-based export: `pkg.torch.onnx.name_scopes` is a Python list repr of the module
    /// paths from the root, ending with the op (`['', 'model', 'model.neck', 'model.neck.1', 'mul_3']`).
    static func dynamoPath(nameScopes: String) -> String? {
        let trimmed = nameScopes.trimmingCharacters(in: "[]")
        guard !trimmed.isEmpty else { return nil }
        let entries = trimmed.components(separatedBy: ", ").map { $0.trimmingCharacters(in: "'\"") }
        guard entries.count >= 2 else { return "" }
        return entries[entries.count - 2]
    }

    /// dynamo-based export, older key: `namespace` = `: Root/model: Cls/model.neck: Cls/mul_3: aten.mul.Tensor`.
    static func dynamoPath(namespace: String) -> String {
        let entries = namespace.split(separator: "/").map { String($0.prefix { $0 != ":" }) }
        guard entries.count >= 2 else { return "" }
        return entries[entries.count - 2]
    }
}
