import SAMFiles
import SAMTensor

/// The members of a zip file as `torch.save` writes it (stored or deflated entries, ZIP64 end
/// records and extra fields), read from the central directory. Every offset and length is checked
/// against the file size when the archive is opened, before any entry's bytes are used.
/// ref: PKWARE APPNOTE.TXT 4.3.7 (local header), 4.3.12 (central directory), 4.3.14-16 (end records), 4.5.3 (ZIP64 extra)
struct ZipArchive: Sendable {
    let file: MappedFile
    /// Every entry, in central-directory order.
    let entries: [ZipEntry]
    private let index: [String: Int]

    var path: String { file.path }

    init(file: MappedFile) throws(FormatError) {
        self.file = file
        let reader = ZipBytes(bytes: file.bytes, path: file.path)
        let directory = try Self.centralDirectory(reader)
        var entries: [ZipEntry] = []
        var index: [String: Int] = [:]
        var position = directory.offset
        for number in 0..<directory.count {
            let (entry, next) = try Self.entry(at: position, number: number, reader)
            guard index.updateValue(entries.count, forKey: entry.name) == nil else {
                throw FormatError(.corrupt, file: file.path, "entry '\(entry.name)' appears twice in the central directory")
            }
            entries.append(entry)
            position = next
        }
        self.entries = entries
        self.index = index
    }

    func entry(named name: String) -> ZipEntry? { index[name].map { entries[$0] } }

    /// The entry's bytes: borrowed from the mapping when stored, inflated into owned memory when deflated.
    func contents(of entry: ZipEntry) throws(FormatError) -> TensorStorage {
        let data = try file.slice(offset: entry.dataOffset, length: entry.compressedSize)
        switch entry.method {
        case .stored: return TensorStorage(borrowing: data, owner: file)
        case .deflated: return try Inflate.entry(entry, data: data, file: path)
        }
    }

    // MARK: - Central directory

    private static let endSignature: UInt32 = 0x0605_4B50
    private static let zip64LocatorSignature: UInt32 = 0x0706_4B50
    private static let zip64EndSignature: UInt32 = 0x0606_4B50
    private static let centralSignature: UInt32 = 0x0201_4B50
    private static let localSignature: UInt32 = 0x0403_4B50
    private static let centralHeaderSize = 46
    private static let localHeaderSize = 30

    /// Entry count, size and offset of the central directory, from the end record (ZIP64's when present).
    private static func centralDirectory(_ reader: ZipBytes) throws(FormatError) -> (count: Int, size: Int, offset: Int) {
        let bytes = reader.bytes
        let path = reader.path
        // The end record is 22 bytes plus a comment of at most 65535: search backwards from the end.
        guard bytes.count >= 22 else { throw FormatError(.truncated, file: path, "too short for a zip file (\(bytes.count) bytes)") }
        var end = -1
        for candidate in stride(from: bytes.count - 22, through: max(0, bytes.count - 22 - 0xFFFF), by: -1) {
            if try reader.uint32(candidate, "end record") == endSignature {
                end = candidate
                break
            }
        }
        guard end >= 0 else {
            // A file that starts like a zip but has no end record was cut short.
            if try reader.uint32(0, "signature") == localSignature {
                throw FormatError(.truncated, file: path, "a zip file without its end-of-central-directory record (cut short)")
            }
            throw FormatError(.corrupt, file: path, "not a zip file (no end-of-central-directory record)")
        }
        var count = Int(try reader.uint16(end + 10, "end record"))
        var size = Int(try reader.uint32(end + 12, "end record"))
        var offset = Int(try reader.uint32(end + 16, "end record"))
        if end >= 20, try reader.uint32(end - 20, "ZIP64 locator") == zip64LocatorSignature {
            let record = try reader.int64(end - 20 + 8, "ZIP64 end record offset")
            guard try reader.uint32(record, "ZIP64 end record") == zip64EndSignature else {
                throw FormatError(.corrupt, file: path, "the ZIP64 locator points at \(record), which holds no ZIP64 end record")
            }
            count = try reader.int64(record + 32, "ZIP64 entry count")
            size = try reader.int64(record + 40, "ZIP64 central directory size")
            offset = try reader.int64(record + 48, "ZIP64 central directory offset")
        }
        try reader.check(offset, size, "the central directory")
        guard count <= size / centralHeaderSize else {
            throw FormatError(.corrupt, file: path, "the central directory declares \(count) entries in \(size) bytes")
        }
        return (count, size, offset)
    }

    /// The central-directory entry at `position`, with its local header checked; and where the next entry starts.
    private static func entry(at position: Int, number: Int, _ reader: ZipBytes) throws(FormatError) -> (ZipEntry, next: Int) {
        let path = reader.path
        let what = "central directory entry \(number)"
        guard try reader.uint32(position, what) == centralSignature else {
            throw FormatError(.corrupt, file: path, "\(what) at \(position) has no entry signature")
        }
        let flags = try reader.uint16(position + 8, what)
        let methodCode = try reader.uint16(position + 10, what)
        let crc = try reader.uint32(position + 16, what)
        var compressedSize = Int(try reader.uint32(position + 20, what))
        var size = Int(try reader.uint32(position + 24, what))
        let nameLength = Int(try reader.uint16(position + 28, what))
        let extraLength = Int(try reader.uint16(position + 30, what))
        let commentLength = Int(try reader.uint16(position + 32, what))
        var localOffset = Int(try reader.uint32(position + 42, what))
        let name = try reader.text(position + centralHeaderSize, nameLength, "\(what)'s name")
        let extraStart = position + centralHeaderSize + nameLength
        try reader.check(extraStart, extraLength + commentLength, "entry '\(name)''s extra field")

        // ZIP64 extra field: 64-bit values for exactly the fields that hold 0xFFFFFFFF, in this order.
        var field = extraStart
        while field + 4 <= extraStart + extraLength {
            let id = try reader.uint16(field, "entry '\(name)''s extra field")
            let length = Int(try reader.uint16(field + 2, "entry '\(name)''s extra field"))
            var cursor = field + 4
            guard cursor + length <= extraStart + extraLength else {
                throw FormatError(.corrupt, file: path, "entry '\(name)': an extra field runs past its header")
            }
            if id == 0x0001 {
                func widened(_ value: inout Int) throws(FormatError) {
                    guard value == 0xFFFF_FFFF else { return }
                    guard cursor + 8 <= field + 4 + length else {
                        throw FormatError(.corrupt, file: path, "entry '\(name)': the ZIP64 extra field is too short")
                    }
                    value = try reader.int64(cursor, "entry '\(name)''s ZIP64 field")
                    cursor += 8
                }
                try widened(&size)
                try widened(&compressedSize)
                try widened(&localOffset)
            }
            field += 4 + length
        }

        guard flags & 1 == 0 else { throw FormatError(.unsupported, file: path, "entry '\(name)' is encrypted") }
        guard let method = ZipEntry.Method(rawValue: methodCode) else {
            throw FormatError(.unsupported, file: path, "entry '\(name)' uses compression method \(methodCode) (readable: 0 stored, 8 deflated)")
        }
        guard method == .deflated || compressedSize == size else {
            throw FormatError(.corrupt, file: path, "stored entry '\(name)' has \(compressedSize) bytes but declares \(size)")
        }
        // The local header repeats the name and may carry its own extra field (torch pads data to 64 bytes there).
        let localWhat = "entry '\(name)''s local header"
        guard try reader.uint32(localOffset, localWhat) == localSignature else {
            throw FormatError(.corrupt, file: path, "\(localWhat) at \(localOffset) has no signature")
        }
        let localNameLength = Int(try reader.uint16(localOffset + 26, localWhat))
        let localExtraLength = Int(try reader.uint16(localOffset + 28, localWhat))
        let dataOffset = localOffset + localHeaderSize + localNameLength + localExtraLength
        try reader.check(dataOffset, compressedSize, "entry '\(name)''s data")
        let entry = ZipEntry(name: name, method: method, crc32: crc, compressedSize: compressedSize, size: size, dataOffset: dataOffset)
        return (entry, extraStart + extraLength + commentLength)
    }
}
