import SAMFormats
import SAMTensor

/// The ONNX part of saminspect's output.
struct ONNXListing {
    let model: ONNXModel
    let withStats: Bool

    func print() throws(FormatError) {
        Swift.print("\(model.path): ONNX model")
        Swift.print("  ir_version \(model.irVersion)  producer \(model.producerName) \(model.producerVersion)"
                    + (model.domain.isEmpty ? "" : "  domain \(model.domain)"))
        Swift.print("  opsets: " + model.opsetImports.map { "\($0.domain.isEmpty ? "ai.onnx" : $0.domain) \($0.version)" }.joined(separator: ", "))
        for (key, value) in model.metadataProps.sorted(by: { $0.key < $1.key }) { Swift.print("  metadata \(key) = \(value)") }
        Swift.print("  inputs:")
        for input in model.graph.realInputs { Swift.print("    " + valueText(input)) }
        Swift.print("  outputs:")
        for output in model.graph.outputs { Swift.print("    " + valueText(output)) }
        var histogram: [String: Int] = [:]
        for node in model.graph.nodes { histogram[node.domain.isEmpty ? node.opType : "\(node.domain).\(node.opType)", default: 0] += 1 }
        Swift.print("  ops (\(model.graph.nodes.count) nodes): "
                    + histogram.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        let stored = model.storedTensors
        let totalBytes = stored.reduce(0) { $0 + byteCount($1) }
        Swift.print("  initializers (\(model.graph.initializers.count), plus \(model.graph.constants.count) Constant values; \(totalBytes) bytes):")
        let nameWidth = min(stored.map(\.name.count).max() ?? 0, 72)
        for initializer in stored {
            var line = "    " + TensorListing.pad(initializer.name, nameWidth) + "  " + TensorListing.pad(initializer.elementType.description, 5)
                + TensorListing.pad(Shape.text(initializer.shape), 18) + "  " + initializer.location.description
            if model.graph.constants.contains(where: { $0.name == initializer.name }) { line += "  (Constant)" }
            if withStats { line += "  " + TensorListing.statsText(try model.tensor(named: initializer.name)) }
            Swift.print(line)
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
