import SAMFiles
import SAMFormats
import SAMTensor

/// The ONNX part of saminspect's output.
struct ONNXListing {
    let model: ONNXModel
    let withStats: Bool

    func print() throws(FormatError) {
        Console.line("\(model.path): ONNX model")
        Console.line("  ir_version \(model.irVersion)  producer \(model.producerName) \(model.producerVersion)"
                    + (model.domain.isEmpty ? "" : "  domain \(model.domain)"))
        Console.line("  opsets: " + model.opsetImports.map { "\($0.domain.isEmpty ? "ai.onnx" : $0.domain) \($0.version)" }.joined(separator: ", "))
        for (key, value) in model.metadataProps.sorted(by: { $0.key < $1.key }) { Console.line("  metadata \(key) = \(value)") }
        Console.line("  inputs:")
        for input in model.graph.realInputs { Console.line("    " + valueText(input)) }
        Console.line("  outputs:")
        for output in model.graph.outputs { Console.line("    " + valueText(output)) }
        var histogram: [String: Int] = [:]
        for node in model.graph.nodes { histogram[node.domain.isEmpty ? node.opType : "\(node.domain).\(node.opType)", default: 0] += 1 }
        Console.line("  ops (\(model.graph.nodes.count) nodes): "
                    + histogram.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        let stored = model.storedTensors
        let totalBytes = stored.reduce(0) { $0 + byteCount($1) }
        Console.line("  initializers (\(model.graph.initializers.count), plus \(model.graph.constants.count) Constant values; \(totalBytes) bytes):")
        let nameWidth = min(stored.map(\.name.count).max() ?? 0, 72)
        let constants = Set(model.graph.constants.map(\.name))  // a set: the listing stays linear in the initializers
        for initializer in stored {
            var line = "    " + TensorListing.pad(initializer.name, nameWidth) + "  " + TensorListing.pad(initializer.elementType.description, 5)
                + TensorListing.pad(Shape.text(initializer.shape), 18) + "  " + initializer.location.description
            if constants.contains(initializer.name) { line += "  (Constant)" }
            if withStats { line += "  " + TensorListing.statsText(try model.tensor(named: initializer.name)) }
            Console.line(line)
        }
    }

    private func valueText(_ value: ONNXValueInfo) -> String {
        let type = value.elementType?.description ?? "non-tensor"
        let dims = value.dims.map { "[" + $0.map(\.description).joined(separator: ",") + "]" } ?? "[rank unknown]"
        return "\(value.name)  \(type) \(dims)"
    }

    private func byteCount(_ initializer: ONNXInitializer) -> Int {
        guard let dtype = initializer.elementType.dtype, let bytes = try? Shape.byteCount(initializer.shape, dtype) else { return 0 }
        return bytes
    }
}
