import CONNXProto
import CProtobufC

/// How deeply a protobuf's messages nest, measured on the wire bytes with the schema's descriptors
/// and an explicit stack, before libprotobuf-c (which unpacks recursively, one C frame per level)
/// sees them. ONNX nests without bound: an `If`/`Loop`/`Scan` attribute holds a graph, whose nodes
/// hold attributes holding graphs...; a `TypeProto` holds sequence types of sequence types.
enum ProtobufNesting {
    /// Protobuf's own parsers stop at 100 levels by default (upb's `kUpb_WireFormat_DefaultDepthLimit`,
    /// the C++ parser's recursion limit), so `onnx.load` refuses deeper files too. For ONNX that is
    /// subgraphs about 32 deep: model > graph > node > attribute > graph ...
    static let maximumDepth = 100

    enum Verdict: Equatable {
        /// Every message nests at most this deep (the top-level message is depth 1).
        case within(depth: Int)
        /// Some message lies deeper than the limit, inside a field of this message type.
        case tooDeep(insideMessage: String)
        /// The wire bytes do not parse (libprotobuf-c will say so; not a depth question).
        case malformed
    }

    /// Walks `bytes` as a message of type `root`, descending into every field the schema declares as
    /// a message, without recursion; stops at the first level past `limit`.
    static func measure(_ bytes: UnsafeRawBufferPointer, root: ProtobufCMessageDescriptor,
                        limit: Int = maximumDepth) -> Verdict {
        struct Frame {
            let end: Int
            let descriptor: UnsafePointer<ProtobufCMessageDescriptor>?
        }
        var stack: [Frame] = []
        var rootDescriptor = root  // the root's fields point at the real sub-message descriptors
        return withUnsafePointer(to: &rootDescriptor) { rootPointer in
            stack.append(Frame(end: bytes.count, descriptor: rootPointer))
            var position = 0
            var deepest = 1
            while let frame = stack.last {
                if position == frame.end {
                    stack.removeLast()
                    continue
                }
                guard position < frame.end, let tag = readVarint(bytes, &position, end: frame.end) else { return .malformed }
                let field = UInt32(truncatingIfNeeded: tag >> 3)
                switch tag & 7 {
                case 0: guard readVarint(bytes, &position, end: frame.end) != nil else { return .malformed }
                case 1: position += 8
                case 5: position += 4
                case 2:
                    guard let length = readVarint(bytes, &position, end: frame.end), length <= UInt64(frame.end - position) else {
                        return .malformed
                    }
                    let end = position + Int(length)
                    if let child = messageField(field, of: frame.descriptor) {
                        guard stack.count + 1 <= limit else { return .tooDeep(insideMessage: name(of: frame.descriptor)) }
                        stack.append(Frame(end: end, descriptor: child))
                        deepest = max(deepest, stack.count)
                    } else {
                        position = end  // bytes, strings, packed scalars, unknown fields: skipped whole
                    }
                default:
                    return .malformed  // groups (3, 4) are not in proto3 files; 6, 7 do not exist
                }
                guard position <= frame.end else { return .malformed }
            }
            return .within(depth: deepest)
        }
    }

    /// The descriptor of field `number` when the schema declares it a message.
    private static func messageField(_ number: UInt32, of descriptor: UnsafePointer<ProtobufCMessageDescriptor>?)
        -> UnsafePointer<ProtobufCMessageDescriptor>? {
        guard let descriptor, let fields = descriptor.pointee.fields else { return nil }
        for index in 0..<Int(descriptor.pointee.n_fields) where fields[index].id == number {
            guard fields[index].type == PROTOBUF_C_TYPE_MESSAGE, let child = fields[index].descriptor else { return nil }
            return child.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
        }
        return nil
    }

    private static func name(of descriptor: UnsafePointer<ProtobufCMessageDescriptor>?) -> String {
        guard let name = descriptor?.pointee.name else { return "?" }
        return String(cString: name)
    }

    private static func readVarint(_ bytes: UnsafeRawBufferPointer, _ position: inout Int, end: Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < end, shift < 64 {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }
}
