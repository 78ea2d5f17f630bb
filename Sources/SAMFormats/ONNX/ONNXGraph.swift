/// Plain Swift values for what an ONNX file describes. Tensor data stays in `ONNXModel`.

/// One dimension of a graph input or output.
public enum ONNXDim: Sendable, Equatable, CustomStringConvertible {
    case fixed(Int)
    case symbolic(String)
    case unknown

    public var description: String {
        switch self {
        case .fixed(let value): String(value)
        case .symbolic(let name): name
        case .unknown: "?"
        }
    }
}

/// A graph input, output or value_info entry.
public struct ONNXValueInfo: Sendable, Equatable {
    public let name: String
    /// nil when the value is not a tensor (sequence, map ...).
    public let elementType: ONNXElementType?
    /// nil when the shape is not given at all (rank unknown).
    public let dims: [ONNXDim]?
}

public struct ONNXOpset: Sendable, Equatable {
    /// "" is the default `ai.onnx` domain.
    public let domain: String
    public let version: Int64
}

public enum ONNXAttributeValue: Sendable, Equatable {
    case float(Float)
    case int(Int64)
    case string(String)
    /// Name of the tensor inside `ONNXModel` (read it with `model.attributeTensor(node:attribute:)`).
    case tensor(dtype: ONNXElementType, shape: [Int])
    case floats([Float])
    case ints([Int64])
    case strings([String])
    case graph(name: String)
    /// Any other kind (sparse tensors, type protos, lists of tensors or graphs), by its ONNX type code.
    case other(type: Int32)
}

public struct ONNXAttribute: Sendable, Equatable {
    public let name: String
    public let value: ONNXAttributeValue
}

public struct ONNXNode: Sendable, Equatable {
    public let name: String
    public let opType: String
    public let domain: String
    public let inputs: [String]
    public let outputs: [String]
    public let attributes: [ONNXAttribute]
    /// The dynamo exporter keeps the PyTorch module scope here (`namespace`, `pkg.torch.onnx.name_scopes`).
    public let metadataProps: [String: String]

    public func attribute(_ name: String) -> ONNXAttributeValue? {
        attributes.first { $0.name == name }?.value
    }
}

/// Where an initializer's bytes live.
public enum ONNXDataLocation: Sendable, Equatable, CustomStringConvertible {
    /// `raw_data` inside the model file.
    case raw(byteCount: Int)
    /// A typed repeated field (`float_data`, `int64_data` ...), `count` elements.
    case typed(field: String, count: Int)
    /// An external file next to the model (`location`, `offset`, `length`; length nil when not given).
    case external(location: String, offset: Int, length: Int?)
    /// A `Constant` node's scalar or list attribute (`value_float`, `value_ints` ...).
    case constantAttribute(String)

    public var description: String {
        switch self {
        case .constantAttribute(let name): "\(name) attribute"
        case .raw(let byteCount): "raw_data (\(byteCount) B)"
        case .typed(let field, let count): "\(field) (\(count) elements)"
        case .external(let location, let offset, let length):
            "external \(location) @\(offset)" + (length.map { " +\($0) B" } ?? "")
        }
    }
}

/// A named tensor stored in the file: a graph initializer or a `Constant` node's value.
public struct ONNXInitializer: Sendable, Equatable {
    public let name: String
    public let elementType: ONNXElementType
    public let shape: [Int]
    public let location: ONNXDataLocation
}

public struct ONNXGraph: Sendable {
    public let name: String
    public let inputs: [ONNXValueInfo]
    public let outputs: [ONNXValueInfo]
    public let nodes: [ONNXNode]
    public let initializers: [ONNXInitializer]
    /// Tensors produced by `Constant` nodes, named by the node's output.
    public let constants: [ONNXInitializer]

    /// Inputs that are not also initializers (older exporters list initializers as inputs too).
    public var realInputs: [ONNXValueInfo] {
        let initializerNames = Set(initializers.map(\.name))
        return inputs.filter { !initializerNames.contains($0.name) }
    }
}
