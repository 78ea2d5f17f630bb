import CONNXProto
import CProtobufC
import SAMFiles
import SAMTensor

/// An ONNX model file read with libprotobuf-c. The unpacked message stays alive as long as
/// this object (or any tensor read from it) does, and tensors borrow its bytes: the file is
/// mapped, unpacked once (protobuf-c's one copy), and never copied again.
public final class ONNXModel: @unchecked Sendable {
    public let path: String
    public let irVersion: Int64
    public let producerName: String
    public let producerVersion: String
    public let domain: String
    public let modelVersion: Int64
    public let docString: String
    public let metadataProps: [String: String]
    public let opsetImports: [ONNXOpset]
    public let graph: ONNXGraph

    let message: UnpackedModel
    /// TensorProto of every initializer and Constant value, by name.
    let tensorProtos: [String: UnsafeMutablePointer<Onnx__TensorProto>]
    /// Tensor-valued node attributes, by node index and attribute name.
    let attributeTensors: [Int: [String: UnsafeMutablePointer<Onnx__TensorProto>]]
    let externalData: ExternalDataFiles
    /// Constant values given as `value_float(s)` / `value_int(s)` attributes, made into tensors.
    let scalarConstants: [String: Tensor]

    public init(path: String) throws(FormatError) {
        self.path = path
        let file = try MappedFile(path: path)
        guard file.count > 0 else { throw FormatError(.corrupt, file: path, "empty file, not an ONNX model") }
        // libprotobuf-c unpacks recursively: nesting is bounded here first, or a deep file overflows its stack.
        if case .tooDeep(let message) = ProtobufNesting.measure(file.bytes, root: onnx__model_proto__descriptor) {
            throw FormatError(.limitExceeded, file: path,
                              "protobuf messages nest deeper than \(ProtobufNesting.maximumDepth) levels (reached inside \(message): "
                                + "subgraphs of If/Loop/Scan attributes, or types inside types); the reader accepts "
                                + "\(ProtobufNesting.maximumDepth), as protobuf's own parsers do")
        }
        guard let unpacked = onnx__model_proto__unpack(nil, file.count, file.bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)) else {
            throw FormatError(.corrupt, file: path, "not a valid ONNX protobuf (truncated or corrupt)")
        }
        message = UnpackedModel(unpacked)
        let model = unpacked.pointee
        guard let graphProto = model.graph else {
            throw FormatError(.corrupt, file: path, "the ModelProto has no graph (not an ONNX model, or corrupt)")
        }
        irVersion = model.has_ir_version != 0 ? model.ir_version : 0
        producerName = string(model.producer_name)
        producerVersion = string(model.producer_version)
        domain = string(model.domain)
        modelVersion = model.has_model_version != 0 ? model.model_version : 0
        docString = string(model.doc_string)
        metadataProps = entries(model.metadata_props, model.n_metadata_props)
        opsetImports = messages(model.opset_import, model.n_opset_import).map {
            ONNXOpset(domain: string($0.pointee.domain), version: $0.pointee.has_version != 0 ? $0.pointee.version : 0)
        }
        externalData = ExternalDataFiles(modelPath: path)

        var protos: [String: UnsafeMutablePointer<Onnx__TensorProto>] = [:]
        var initializers: [ONNXInitializer] = []
        var names = StoredNames(file: path)
        for (index, proto) in messages(graphProto.pointee.initializer, graphProto.pointee.n_initializer).enumerated() {
            let description = try Self.describe(proto, name: string(proto.pointee.name), file: path)
            try names.claim(description.name, by: "initializer \(index)")
            initializers.append(description)
            protos[description.name] = proto
        }
        var nodes: [ONNXNode] = []
        var constants: [ONNXInitializer] = []
        var attributeProtos: [Int: [String: UnsafeMutablePointer<Onnx__TensorProto>]] = [:]
        var attributeConstants: [String: Tensor] = [:]
        for (index, nodeProto) in messages(graphProto.pointee.node, graphProto.pointee.n_node).enumerated() {
            let node = nodeProto.pointee
            var attributes: [ONNXAttribute] = []
            for attributeProto in messages(node.attribute, node.n_attribute) {
                let (attribute, tensor) = try Self.attribute(attributeProto, file: path)
                attributes.append(attribute)
                if let tensor { attributeProtos[index, default: [:]][attribute.name] = tensor }
            }
            let parsed = ONNXNode(name: string(node.name), opType: string(node.op_type), domain: string(node.domain),
                                  inputs: array(node.input, node.n_input).map { string($0) },
                                  outputs: array(node.output, node.n_output).map { string($0) },
                                  attributes: attributes, metadataProps: entries(node.metadata_props, node.n_metadata_props))
            nodes.append(parsed)
            if parsed.opType == "Constant", parsed.domain.isEmpty || parsed.domain == "ai.onnx",
               let output = parsed.outputs.first {
                if let value = attributeProtos[index]?["value"] {
                    try names.claim(output, by: "the Constant node \(index)")
                    constants.append(try Self.describe(value, name: output, file: path))
                    protos[output] = value
                } else if let (attribute, tensor) = Self.constantFromListAttribute(parsed) {
                    try names.claim(output, by: "the Constant node \(index)")
                    constants.append(ONNXInitializer(name: output, elementType: ONNXElementType(code: tensor.dtype == .float32 ? 1 : 7),
                                                     shape: tensor.shape, location: .constantAttribute(attribute)))
                    attributeConstants[output] = tensor
                }
            }
        }
        tensorProtos = protos
        scalarConstants = attributeConstants
        attributeTensors = attributeProtos
        graph = ONNXGraph(name: string(graphProto.pointee.name),
                          inputs: messages(graphProto.pointee.input, graphProto.pointee.n_input).map(Self.valueInfo),
                          outputs: messages(graphProto.pointee.output, graphProto.pointee.n_output).map(Self.valueInfo),
                          nodes: nodes, initializers: initializers, constants: constants)
    }

    /// Every stored tensor: initializers, then Constant values.
    public var storedTensors: [ONNXInitializer] { graph.initializers + graph.constants }

    /// The external-data files tensors have been read from so far, as paths beside the model
    /// (`folder/location`), sorted: only locations that passed the path checks and were opened.
    public var externalDataFilesRead: [String] { externalData.pathsRead }

    /// Reads the initializer or Constant output called `name`. External data is borrowed from its
    /// mapping; with `copyingExternalData` it is copied out and the mapped pages given back at once,
    /// for a reader that reads every tensor once and must not leave them all resident (a conversion).
    public func tensor(named name: String, copyingExternalData: Bool = false) throws(FormatError) -> Tensor {
        if let constant = scalarConstants[name] { return constant }
        guard let proto = tensorProtos[name] else {
            throw FormatError(.missingTensor, file: path, tensor: name, "no initializer or Constant of that name")
        }
        return try decode(proto, name: name, copyingExternalData: copyingExternalData)
    }

    /// Reads the tensor-valued attribute `attribute` of node number `nodeIndex` in `graph.nodes`.
    public func attributeTensor(nodeIndex: Int, attribute: String) throws(FormatError) -> Tensor {
        guard let proto = attributeTensors[nodeIndex]?[attribute] else {
            throw FormatError(.missingTensor, file: path, tensor: attribute, "node \(nodeIndex) has no tensor attribute of that name")
        }
        return try decode(proto, name: "\(graph.nodes[nodeIndex].name).\(attribute)")
    }
}

extension ONNXModel {
    /// A Constant node's `value_float`, `value_floats`, `value_int` or `value_ints` as a tensor
    /// (scalars have shape [], lists shape [n]), per the Constant operator's definition.
    static func constantFromListAttribute(_ node: ONNXNode) -> (String, Tensor)? {
        for attribute in node.attributes {
            switch (attribute.name, attribute.value) {
            case ("value_float", .float(let value)):
                return (attribute.name, Tensor(shape: [], floats: [value]))
            case ("value_floats", .floats(let values)):
                return (attribute.name, Tensor(shape: [values.count], floats: values))
            case ("value_int", .int(let value)):
                return (attribute.name, int64Tensor([value], shape: []))
            case ("value_ints", .ints(let values)):
                return (attribute.name, int64Tensor(values, shape: [values.count]))
            default: continue
            }
        }
        return nil
    }

    private static func int64Tensor(_ values: [Int64], shape: [Int]) -> Tensor {
        let storage = values.withUnsafeBytes { TensorStorage(copying: $0) }
        return Tensor(dtype: .int64, shape: shape, checkedStorage: storage)
    }
}

/// The names of a graph's stored tensors, which must be unique (ONNX graphs are in SSA form): a
/// second initializer or Constant of one name is an error naming both, never a silent choice.
struct StoredNames {
    let file: String
    private var owners: [String: String] = [:]

    init(file: String) { self.file = file }

    mutating func claim(_ name: String, by owner: String) throws(FormatError) {
        if let first = owners.updateValue(owner, forKey: name) {
            throw FormatError(.duplicateName, file: file, tensor: name, "defined twice: by \(first) and by \(owner)")
        }
    }
}

/// Owns protobuf-c's unpacked ModelProto and frees it when the last tensor borrowing it is gone.
final class UnpackedModel: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Onnx__ModelProto>
    init(_ pointer: UnsafeMutablePointer<Onnx__ModelProto>) { self.pointer = pointer }
    deinit { onnx__model_proto__free_unpacked(pointer, nil) }
}

// MARK: - Small C-to-Swift helpers

func string(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
    guard let pointer else { return "" }
    return String(cString: pointer)
}

func array<T>(_ pointer: UnsafeMutablePointer<T>?, _ count: Int) -> [T] {
    guard let pointer, count > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: pointer, count: count))
}

/// The non-null elements of a repeated message field.
func messages<T>(_ pointer: UnsafeMutablePointer<UnsafeMutablePointer<T>?>?, _ count: Int) -> [UnsafeMutablePointer<T>] {
    array(pointer, count).compactMap { $0 }
}

func entries(_ pointer: UnsafeMutablePointer<UnsafeMutablePointer<Onnx__StringStringEntryProto>?>?, _ count: Int) -> [String: String] {
    var result: [String: String] = [:]
    for entry in messages(pointer, count) {
        result[string(entry.pointee.key)] = string(entry.pointee.value)
    }
    return result
}

func binaryString(_ data: ProtobufCBinaryData) -> String {
    guard let bytes = data.data, data.len > 0 else { return "" }
    return String(decoding: UnsafeBufferPointer(start: bytes, count: data.len), as: UTF8.self)
}
