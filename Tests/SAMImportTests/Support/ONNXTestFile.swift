import Foundation
import SAMTestSupport

/// Writes small ONNX models for tests: just the protobuf fields the importer reads (nodes with
/// names, inputs, outputs, int/tensor attributes and metadata; float, int64 and raw typed
/// initializers; Constant nodes). Field numbers from onnx.proto (Sources/CONNXProto/onnx.proto).
struct ONNXTestFile {
    struct FloatTensor {
        var name: String
        var shape: [Int]
        var values: [Float]
    }

    struct Node {
        var op: String
        var name: String
        var inputs: [String]
        var outputs: [String]
        var intAttributes: [String: Int64] = [:]
        var stringAttributes: [String: String] = [:]
        /// A Constant node's `value`.
        var value: FloatTensor?
        var metadata: [String: String] = [:]
        /// A Constant node's `value` of any element type.
        var typedValue: TypedTensor? = nil
    }

    /// An initializer of any element type (`TensorProto.DataType` code), its bytes as raw_data.
    struct TypedTensor {
        var name: String
        var shape: [Int]
        var elementType: Int
        var raw: Data

        static func int8(_ name: String, _ shape: [Int], _ values: [Int8]) -> TypedTensor {
            TypedTensor(name: name, shape: shape, elementType: 3, raw: values.withUnsafeBytes { Data($0) })
        }
        static func uint8(_ name: String, _ shape: [Int], _ values: [UInt8]) -> TypedTensor {
            TypedTensor(name: name, shape: shape, elementType: 2, raw: Data(values))
        }
        static func int32(_ name: String, _ shape: [Int], _ values: [Int32]) -> TypedTensor {
            TypedTensor(name: name, shape: shape, elementType: 6, raw: values.withUnsafeBytes { Data($0) })
        }
        static func float(_ name: String, _ shape: [Int], _ values: [Float]) -> TypedTensor {
            TypedTensor(name: name, shape: shape, elementType: 1, raw: values.withUnsafeBytes { Data($0) })
        }
        static func double(_ name: String, _ shape: [Int], _ values: [Double]) -> TypedTensor {
            TypedTensor(name: name, shape: shape, elementType: 11, raw: values.withUnsafeBytes { Data($0) })
        }
    }

    /// An int64 initializer (indices, shapes).
    struct Int64Tensor {
        var name: String
        var shape: [Int]
        var values: [Int64]
    }

    var nodes: [Node] = []
    var initializers: [FloatTensor] = []
    var int64Initializers: [Int64Tensor] = []
    var typedInitializers: [TypedTensor] = []
    var inputs: [String] = []
    var outputs: [String] = []
    /// The ai.onnx opset the model imports.
    var opset = 17

    mutating func initializer(_ name: String, _ shape: [Int], _ values: [Float]? = nil) {
        let count = shape.reduce(1, *)
        initializers.append(FloatTensor(name: name, shape: shape, values: values ?? (0..<count).map { Float($0) * 0.25 - 1 }))
    }

    mutating func node(_ op: String, _ name: String, _ inputs: [String], _ outputs: [String],
                       ints: [String: Int64] = [:], strings: [String: String] = [:], metadata: [String: String] = [:]) {
        nodes.append(Node(op: op, name: name, inputs: inputs, outputs: outputs, intAttributes: ints,
                          stringAttributes: strings, metadata: metadata))
    }

    func write(to path: String) throws {
        var graph = Data()
        for node in nodes { graph.field(1, message: Self.encode(node)) }
        graph.field(2, string: "test")
        for tensor in initializers { graph.field(5, message: Self.encode(tensor)) }
        for tensor in int64Initializers { graph.field(5, message: Self.encode(tensor)) }
        for tensor in typedInitializers { graph.field(5, message: Self.encode(tensor)) }
        for input in inputs { graph.field(11, message: Data().with { $0.field(1, string: input) }) }
        for output in outputs { graph.field(12, message: Data().with { $0.field(1, string: output) }) }
        var model = Data()
        model.field(1, varint: 8)  // ir_version
        model.field(2, string: "SAMImportTests")
        model.field(7, message: graph)
        model.field(8, message: Data().with { $0.field(1, string: ""); $0.field(2, varint: UInt64(opset)) })  // opset_import
        try model.write(to: URL(fileURLWithPath: path))
    }

    static func encode(_ tensor: FloatTensor) -> Data {
        var data = Data()
        for dim in tensor.shape { data.field(1, varint: UInt64(dim)) }
        data.field(2, varint: 1)  // FLOAT
        data.field(8, string: tensor.name)
        data.field(9, bytes: tensor.values.withUnsafeBytes { Data($0) })
        return data
    }

    static func encode(_ tensor: Int64Tensor) -> Data {
        var data = Data()
        for dim in tensor.shape { data.field(1, varint: UInt64(dim)) }
        data.field(2, varint: 7)  // INT64
        data.field(8, string: tensor.name)
        data.field(9, bytes: tensor.values.withUnsafeBytes { Data($0) })
        return data
    }

    static func encode(_ tensor: TypedTensor) -> Data {
        var data = Data()
        for dim in tensor.shape { data.field(1, varint: UInt64(dim)) }
        data.field(2, varint: UInt64(tensor.elementType))
        data.field(8, string: tensor.name)
        data.field(9, bytes: tensor.raw)
        return data
    }

    static func encode(_ node: Node) -> Data {
        var data = Data()
        for input in node.inputs { data.field(1, string: input) }
        for output in node.outputs { data.field(2, string: output) }
        data.field(3, string: node.name)
        data.field(4, string: node.op)
        for (name, value) in node.intAttributes.sorted(by: { $0.key < $1.key }) {
            data.field(5, message: Data().with { $0.field(1, string: name); $0.field(3, varint: UInt64(bitPattern: value)); $0.field(20, varint: 2) })
        }
        for (name, value) in node.stringAttributes.sorted(by: { $0.key < $1.key }) {
            data.field(5, message: Data().with { $0.field(1, string: name); $0.field(4, string: value); $0.field(20, varint: 3) })
        }
        if let value = node.value {
            data.field(5, message: Data().with { $0.field(1, string: "value"); $0.field(5, message: encode(value)); $0.field(20, varint: 4) })
        }
        if let value = node.typedValue {
            data.field(5, message: Data().with { $0.field(1, string: "value"); $0.field(5, message: encode(value)); $0.field(20, varint: 4) })
        }
        for (key, value) in node.metadata.sorted(by: { $0.key < $1.key }) {
            data.field(9, message: Data().with { $0.field(1, string: key); $0.field(2, string: value) })
        }
        return data
    }
}

private extension Data {
    func with(_ build: (inout Data) -> Void) -> Data {
        var copy = self
        build(&copy)
        return copy
    }

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        append(UInt8(value))
    }

    mutating func field(_ number: Int, varint value: UInt64) {
        varint(UInt64(number << 3))
        varint(value)
    }

    mutating func field(_ number: Int, bytes: Data) {
        varint(UInt64(number << 3 | 2))
        varint(UInt64(bytes.count))
        append(bytes)
    }

    mutating func field(_ number: Int, string: String) { field(number, bytes: Data(string.utf8)) }
    mutating func field(_ number: Int, message: Data) { field(number, bytes: message) }
}

/// A fresh folder under the system temporary directory, removed by the caller.
func temporaryFolder() throws -> String {
    try TestPaths.temporaryFolder("SAMImportTests")
}
