import CZlib
import Foundation

/// A `torch.save` checkpoint written byte by byte (no Python): a zip of `<archive>/data.pkl`, a
/// protocol-2 pickle of a dict of `_rebuild_tensor_v2` views, and one `<archive>/data/<name>` entry
/// per storage, stored or deflated, whose declared size may be anything a hostile file claims.
public struct TorchCheckpointWriter {
    /// One zip member's bytes as written, and what its header declares.
    public enum Member {
        case stored([UInt8])
        /// Raw deflate bytes, the size they claim to inflate to, and the CRC-32 of that content.
        case deflated(compressed: [UInt8], size: Int, crc32: UInt32)
    }

    public struct Storage {
        public var name: String
        /// `FloatStorage`, `HalfStorage` ...
        public var type: String
        public var elementCount: Int
        public var member: Member

        public init(name: String, type: String = "FloatStorage", elementCount: Int, member: Member) {
            self.name = name
            self.type = type
            self.elementCount = elementCount
            self.member = member
        }
    }

    public struct View {
        public var key: String
        public var storage: String
        public var offset: Int
        public var shape: [Int]
        public var strides: [Int]

        public init(key: String, storage: String, offset: Int = 0, shape: [Int], strides: [Int]? = nil) {
            self.key = key
            self.storage = storage
            self.offset = offset
            self.shape = shape
            // C order unless given.
            self.strides = strides ?? shape.indices.map { shape[($0 + 1)...].reduce(1, *) }
        }
    }

    public var archive = "archive"
    public var storages: [Storage] = []
    public var views: [View] = []
    /// More members under the archive folder that no tensor names (padding, leftovers).
    public var extraMembers: [(name: String, member: Member)] = []
    /// `data.pkl` as written, instead of the pickle of `views`.
    public var pickleMember: Member?

    public init() {}

    public func write(to path: String) throws {
        try Data(bytes()).write(to: URL(fileURLWithPath: path))
    }

    public func bytes() -> [UInt8] {
        var members: [(String, Member)] = [("\(archive)/data.pkl", pickleMember ?? .stored(pickle()))]
        members += storages.map { ("\(archive)/data/\($0.name)", $0.member) }
        members += extraMembers.map { ("\(archive)/\($0.name)", $0.member) }
        return Self.zip(members)
    }

    // MARK: - The pickle

    /// `{key: _rebuild_tensor_v2(persistent_load(('storage', torch.<type>, name, 'cpu', numel)), offset,
    /// size, stride, False, OrderedDict()), ...}`, protocol 2, as torch.save writes a state dict.
    func pickle() -> [UInt8] {
        var out: [UInt8] = [0x80, 0x02, 0x7D, 0x28]  // PROTO 2, EMPTY_DICT, MARK
        func unicode(_ text: String) { out.append(0x58); out += le32(UInt32(text.utf8.count)); out += Array(text.utf8) }
        func global(_ module: String, _ name: String) { out.append(0x63); out += Array("\(module)\n\(name)\n".utf8) }
        func int(_ value: Int) { out.append(0x4A); out += le32(UInt32(truncatingIfNeeded: Int32(value))) }
        func tuple(_ values: [Int]) { out.append(0x28); values.forEach(int); out.append(0x74) }
        let types = Dictionary(storages.map { ($0.name, ($0.type, $0.elementCount)) }, uniquingKeysWith: { first, _ in first })
        for view in views {
            let (type, count) = types[view.storage] ?? ("FloatStorage", 0)
            unicode(view.key)
            global("torch._utils", "_rebuild_tensor_v2")
            out.append(0x28)  // MARK: the call's arguments
            out.append(0x28); unicode("storage"); global("torch", type); unicode(view.storage); unicode("cpu"); int(count)
            out += [0x74, 0x51]  // TUPLE, BINPERSID
            int(view.offset)
            tuple(view.shape)
            tuple(view.strides)
            out.append(0x89)  // NEWFALSE: requires_grad
            global("collections", "OrderedDict"); out += [0x29, 0x52]  // EMPTY_TUPLE, REDUCE
            out += [0x74, 0x52]  // TUPLE, REDUCE
        }
        out += [0x75, 0x2E]  // SETITEMS, STOP
        return out
    }

    // MARK: - The zip

    static func zip(_ members: [(String, Member)]) -> [UInt8] {
        var out: [UInt8] = [], central: [UInt8] = []
        for (name, member) in members {
            let offset = out.count
            let (method, data, size, crc): (UInt16, [UInt8], Int, UInt32) = switch member {
            case .stored(let bytes): (0, bytes, bytes.count, crc32(bytes))
            case .deflated(let compressed, let size, let crc): (8, compressed, size, crc)
            }
            let nameBytes = Array(name.utf8)
            // Local header: signature, version, flags, method, time, date, CRC, sizes, name and extra lengths.
            out += le32(0x0403_4B50) + le16(20) + le16(0) + le16(method) + le16(0) + le16(0)
            out += le32(crc) + le32(UInt32(data.count)) + le32(UInt32(size)) + le16(UInt16(nameBytes.count)) + le16(0)
            out += nameBytes + data
            central += le32(0x0201_4B50) + le16(20) + le16(20) + le16(0) + le16(method) + le16(0) + le16(0)
            central += le32(crc) + le32(UInt32(data.count)) + le32(UInt32(size)) + le16(UInt16(nameBytes.count))
            central += le16(0) + le16(0) + le16(0) + le16(0) + le32(0) + le32(UInt32(offset)) + nameBytes
        }
        let directoryOffset = out.count
        out += central
        out += le32(0x0605_4B50) + le16(0) + le16(0) + le16(UInt16(members.count)) + le16(UInt16(members.count))
        out += le32(UInt32(central.count)) + le32(UInt32(directoryOffset)) + le16(0)
        return out
    }

    // MARK: - Deflated zeros

    /// A raw deflate stream that really inflates to `count` zero bytes (a multiple of 16 MiB, or less),
    /// about 1028:1, made without deflating all of it: one 16 MiB block compressed with a full flush
    /// (which resets the compressor, so every further block compresses to the same bytes), repeated,
    /// then an empty final block. Returns the stream and the CRC-32 of the zeros.
    public static func deflatedZeros(count: Int) -> (compressed: [UInt8], crc32: UInt32) {
        let block = min(count, 16 << 20)
        precondition(count % block == 0, "count must be a multiple of 16 MiB")
        var stream = z_stream()
        precondition(deflateInit2_(&stream, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY, zlibVersion(),
                                   Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        defer { deflateEnd(&stream) }
        func run(_ input: [UInt8], flush: Int32) -> [UInt8] {
            var input = input
            var output = [UInt8](repeating: 0, count: input.count / 100 + 1024)
            let produced = input.withUnsafeMutableBufferPointer { source in
                output.withUnsafeMutableBufferPointer { target in
                    stream.next_in = source.baseAddress
                    stream.avail_in = uInt(source.count)
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    _ = deflate(&stream, flush)
                    precondition(stream.avail_in == 0, "deflate output buffer too small")
                    return target.count - Int(stream.avail_out)
                }
            }
            return Array(output[0..<produced])
        }
        let zeros = [UInt8](repeating: 0, count: block)
        let repeated = run(zeros, flush: Z_FULL_FLUSH)
        let final = run([], flush: Z_FINISH)
        var compressed: [UInt8] = []
        compressed.reserveCapacity(repeated.count * (count / block) + final.count)
        for _ in 0..<(count / block) { compressed += repeated }
        compressed += final
        let blockCRC = zeros.withUnsafeBufferPointer { UInt32(CZlib.crc32(0, $0.baseAddress, uInt($0.count))) }
        var crc = blockCRC
        for _ in 1..<(count / block) { crc = UInt32(crc32_combine(uLong(crc), uLong(blockCRC), off_t(block))) }
        return (compressed, crc)
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { UInt32(CZlib.crc32(0, $0.baseAddress, uInt($0.count))) }
    }
}

private func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
private func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
