import Foundation
import SAMTestSupport

/// Protobuf wire bytes written by hand, for ONNX files no exporter would make (field numbers from
/// onnx.proto): graphs nesting 20,000 deep, duplicate names, weights of the wrong type.
struct Proto {
    var bytes = Data()

    static func varintBytes(_ value: UInt64) -> Data { ONNXInitializerSwap.varint(value) }

    mutating func varint(_ field: Int, _ value: UInt64) {
        bytes += Self.varintBytes(UInt64(field << 3)) + Self.varintBytes(value)
    }

    mutating func lengthDelimited(_ field: Int, _ payload: Data) {
        bytes += Self.varintBytes(UInt64(field << 3 | 2)) + Self.varintBytes(UInt64(payload.count)) + payload
    }

    mutating func string(_ field: Int, _ text: String) { lengthDelimited(field, Data(text.utf8)) }
    mutating func message(_ field: Int, _ message: Proto) { lengthDelimited(field, message.bytes) }
}

enum HostileONNX {
    // TensorProto.DataType codes.
    static let float: UInt64 = 1, uint8: UInt64 = 2, string: UInt64 = 8, int64: UInt64 = 7, bool: UInt64 = 9

    /// ModelProto { ir_version 8, opset_import { version 17 }, graph }.
    static func model(_ graph: Proto) -> Data {
        var opset = Proto()
        opset.varint(2, 17)
        var model = Proto()
        model.varint(1, 8)
        model.message(8, opset)
        model.message(7, graph)
        return model.bytes
    }

    /// GraphProto with `initializers` (TensorProto) and `nodes`.
    static func graph(name: String = "g", nodes: [Proto] = [], initializers: [Proto] = [], inputs: [Proto] = []) -> Proto {
        var graph = Proto()
        for node in nodes { graph.message(1, node) }
        graph.string(2, name)
        for initializer in initializers { graph.message(5, initializer) }
        for input in inputs { graph.message(11, input) }
        return graph
    }

    /// TensorProto with raw_data (`raw`), or external data (`location`, `offset`, `length`).
    static func tensor(_ name: String, type: UInt64 = float, dims: [Int], raw: Data? = nil,
                       external: (location: String, offset: Int, length: Int?)? = nil, strings: [String] = []) -> Proto {
        var tensor = Proto()
        for dim in dims { tensor.varint(1, UInt64(bitPattern: Int64(dim))) }
        tensor.varint(2, type)
        for text in strings { tensor.string(6, text) }
        tensor.string(8, name)
        if let raw { tensor.lengthDelimited(9, raw) }
        if let external {
            var entries = [("location", external.location), ("offset", String(external.offset))]
            if let length = external.length { entries.append(("length", String(length))) }
            for (key, value) in entries {
                var entry = Proto()
                entry.string(1, key)
                entry.string(2, value)
                tensor.message(13, entry)
            }
            tensor.varint(14, 1)  // data_location EXTERNAL
        }
        return tensor
    }

    static func floats(_ values: [Float]) -> Data { values.withUnsafeBytes { Data($0) } }

    /// A graph whose one `If` node's then_branch holds a graph whose `If` holds a graph ... `depth`
    /// deep: 3 messages per level. Written from the inside out with lengths computed first, so a
    /// 20,000-deep file (~600 KB) costs one pass, not a copy per level.
    static func nestedIfGraphs(depth: Int) -> Data {
        let innermost = graph(name: "leaf").bytes
        var attributeHead = Proto()
        attributeHead.string(1, "then_branch")
        attributeHead.varint(20, 5)  // type GRAPH
        var nodeHead = Proto()
        nodeHead.string(4, "If")
        // Per level, outermost last: graph { node { attribute { head, g = inner } } }.
        var prefixes: [Data] = []
        var inner = innermost.count
        for _ in 0..<depth {
            let attribute = attributeHead.bytes + Proto.varintBytes(6 << 3 | 2) + Proto.varintBytes(UInt64(inner))
            let attributeLength = attribute.count + inner
            let node = nodeHead.bytes + Proto.varintBytes(5 << 3 | 2) + Proto.varintBytes(UInt64(attributeLength))
            let nodeLength = node.count + attributeLength
            let graph = Proto.varintBytes(1 << 3 | 2) + Proto.varintBytes(UInt64(nodeLength))
            prefixes.append(graph + node + attribute)
            inner = graph.count + nodeLength
        }
        var graphPayload = Data()
        graphPayload.reserveCapacity(inner)
        for prefix in prefixes.reversed() { graphPayload += prefix }
        graphPayload += innermost
        var opset = Proto()
        opset.varint(2, 17)
        var head = Proto()
        head.varint(1, 8)
        head.message(8, opset)
        return head.bytes + Proto.varintBytes(7 << 3 | 2) + Proto.varintBytes(UInt64(graphPayload.count)) + graphPayload
    }

    /// A graph input whose type is a sequence of sequences ... `depth` deep (2 messages per level).
    static func nestedSequenceType(depth: Int) -> Data {
        var type = Proto()
        var tensorType = Proto()
        tensorType.varint(1, float)
        type.message(1, tensorType)
        var inner = type.bytes.count
        // TypeProto { sequence_type (4) { elem_type (1) TypeProto } }, built inside out from lengths.
        var prefixes: [Data] = []
        for _ in 0..<depth {
            let sequence = Proto.varintBytes(1 << 3 | 2) + Proto.varintBytes(UInt64(inner))
            let sequenceLength = sequence.count + inner
            let outer = Proto.varintBytes(4 << 3 | 2) + Proto.varintBytes(UInt64(sequenceLength))
            prefixes.append(outer + sequence)
            inner = outer.count + sequenceLength
        }
        var typeBytes = Data()
        for prefix in prefixes.reversed() { typeBytes += prefix }
        typeBytes += type.bytes
        var valueInfo = Proto()
        valueInfo.string(1, "x")
        valueInfo.lengthDelimited(2, typeBytes)
        return model(graph(inputs: [valueInfo]))
    }
}
