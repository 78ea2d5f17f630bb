import Foundation

/// Replaces one initializer of an ONNX file's bytes and leaves every other byte as it was, so a test
/// can make a committed export hostile in one place (a zero point stored as int32 instead of int8)
/// without an ONNX library. Walks the protobuf wire format: ModelProto.graph (field 7), then
/// GraphProto.initializer (field 5) named by TensorProto.name (field 8); field numbers from onnx.proto.
public enum ONNXInitializerSwap {
    public struct NotFound: Error, CustomStringConvertible {
        public let name: String
        public var description: String { "no initializer named '\(name)'" }
    }

    /// A TensorProto { dims, data_type (a `TensorProto.DataType` code), name, raw_data }.
    public static func tensor(_ name: String, type: Int, dims: [Int], raw: Data) -> Data {
        var tensor = Data()
        for dim in dims { tensor += key(1, wireType: 0) + varint(UInt64(dim)) }
        tensor += key(2, wireType: 0) + varint(UInt64(type))
        tensor += lengthDelimited(8, Data(name.utf8))
        tensor += lengthDelimited(9, raw)
        return tensor
    }

    /// `model` with the initializer called `name` replaced by the TensorProto `replacement`.
    public static func replacing(_ name: String, in model: Data, with replacement: Data) throws -> Data {
        var found = false
        let rewritten = try rewrite(Data(model), field: 7) { graph in
            try rewrite(graph, field: 5) { tensor in
                guard try stringField(8, in: tensor) == name else { return tensor }
                found = true
                return replacement
            }
        }
        guard found else { throw NotFound(name: name) }
        return rewritten
    }

    // MARK: - Wire format

    struct Malformed: Error {}

    /// `message` with every length-delimited `field` passed through `transform`.
    static func rewrite(_ message: Data, field wanted: Int, _ transform: (Data) throws -> Data) throws -> Data {
        var out = Data(), offset = message.startIndex
        while offset < message.endIndex {
            let start = offset
            let key = try readVarint(message, &offset)
            let (field, wireType) = (Int(key >> 3), Int(key & 7))
            switch wireType {
            case 0: _ = try readVarint(message, &offset)
            case 1: offset += 8
            case 5: offset += 4
            case 2:
                let length = Int(try readVarint(message, &offset))
                guard length >= 0, offset + length <= message.endIndex else { throw Malformed() }
                let payload = message[offset..<offset + length]
                offset += length
                if field == wanted {
                    out += lengthDelimited(field, try transform(Data(payload)))
                    continue
                }
            default: throw Malformed()
            }
            guard offset <= message.endIndex else { throw Malformed() }
            out += message[start..<offset]
        }
        return out
    }

    static func stringField(_ wanted: Int, in message: Data) throws -> String? {
        var result: String?
        _ = try rewrite(message, field: wanted) { payload in
            result = String(decoding: payload, as: UTF8.self)
            return payload
        }
        return result
    }

    static func readVarint(_ data: Data, _ offset: inout Data.Index) throws -> UInt64 {
        var value: UInt64 = 0, shift: UInt64 = 0
        while true {
            guard offset < data.endIndex, shift < 64 else { throw Malformed() }
            let byte = data[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    /// `value` as a protobuf varint (7 bits a byte, low first).
    public static func varint(_ value: UInt64) -> Data {
        var value = value, out = Data()
        repeat {
            var byte = UInt8(value & 0x7F)
            value >>= 7
            if value != 0 { byte |= 0x80 }
            out.append(byte)
        } while value != 0
        return out
    }

    static func key(_ field: Int, wireType: Int) -> Data { varint(UInt64(field << 3 | wireType)) }

    static func lengthDelimited(_ field: Int, _ payload: Data) -> Data {
        key(field, wireType: 2) + varint(UInt64(payload.count)) + payload
    }
}
