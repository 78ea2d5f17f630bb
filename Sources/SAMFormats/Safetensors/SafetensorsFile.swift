import SAMFiles
import SAMTensor

/// A safetensors file: an 8-byte little-endian header length, a JSON header naming every tensor's
/// dtype, shape and byte range (`data_offsets`, relative to the end of the header), then the data.
/// Opening checks every entry against the file (offsets in range, sizes matching shapes, no two
/// tensors overlapping, dtype known); tensors then borrow the mapped file, except bfloat16, which
/// is widened to float32 (exact).
/// ref: huggingface/safetensors README "Format"
public final class SafetensorsFile: @unchecked Sendable {
    public let path: String
    /// Every tensor, in data order.
    public let entries: [SafetensorsEntry]
    /// The header's `__metadata__` (free-form strings).
    public let metadata: [String: String]
    /// Where the data region starts in the file.
    public let dataStart: Int
    private let file: MappedFile
    private let index: [String: Int]

    /// The header is a small JSON table; a longer declared length is refused before it is read.
    static let maximumHeaderBytes = 100 << 20

    public init(path: String) throws(FormatError) {
        self.path = path
        file = try MappedFile(path: path)
        guard file.count >= 8 else {
            throw FormatError(.truncated, file: path, "\(file.count) bytes: too short for a safetensors header length")
        }
        let headerLength = file.bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian
        guard headerLength <= UInt64(Self.maximumHeaderBytes) else {
            throw FormatError(.corrupt, file: path, "header length \(headerLength) is more than a safetensors header holds (\(Self.maximumHeaderBytes))")
        }
        let header = try SafetensorsHeader.parse(try file.slice(offset: 8, length: Int(headerLength)), file: path)
        dataStart = 8 + Int(headerLength)
        metadata = header.metadata
        let dataLength = file.count - dataStart
        var entries: [SafetensorsEntry] = []
        for (name, raw) in header.entries.sorted(by: { $0.key < $1.key }) {  // in name order: the same error every time
            entries.append(try SafetensorsEntry(name: name, raw, dataLength: dataLength, file: path))
        }
        entries.sort { ($0.begin, $0.end, $0.name) < ($1.begin, $1.end, $1.name) }
        try Self.checkNoOverlap(entries, file: path)
        self.entries = entries
        index = Dictionary(entries.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public var names: [String] { entries.map(\.name) }

    public func entry(named name: String) -> SafetensorsEntry? { index[name].map { entries[$0] } }

    /// One tensor: borrowing the mapped file, or widened when stored as bfloat16.
    public func tensor(named name: String) throws(FormatError) -> Tensor {
        guard let entry = entry(named: name) else {
            throw FormatError(.missingTensor, file: path, tensor: name, "not in the header")
        }
        let bytes = try file.slice(offset: dataStart + entry.begin, length: entry.end - entry.begin, tensor: name)
        let storage: TensorStorage
        if entry.elementType == .bfloat16 {
            guard let widened = CheckpointElementType.widenBFloat16(bytes) else {
                throw FormatError(.outOfMemory, file: path, tensor: name, "cannot allocate \(bytes.count * 2) bytes to widen it to float32")
            }
            storage = widened
        } else {
            storage = TensorStorage(borrowing: bytes, owner: file)
        }
        // Safe: init checked the byte range against the shape and dtype.
        return Tensor(dtype: entry.elementType.dtype, shape: entry.shape, checkedStorage: storage)
    }

    /// Every tensor, by name.
    public func readAll() throws(FormatError) -> [String: Tensor] {
        var result: [String: Tensor] = [:]
        for entry in entries { result[entry.name] = try tensor(named: entry.name) }
        return result
    }

    /// Entries sorted by start: each non-empty one must start at or after every earlier one's end.
    private static func checkNoOverlap(_ entries: [SafetensorsEntry], file: String) throws(FormatError) {
        var furthest: SafetensorsEntry?
        for entry in entries where entry.end > entry.begin {
            if let furthest, entry.begin < furthest.end {
                throw FormatError(.corrupt, file: file, tensor: entry.name,
                                  "bytes \(entry.begin)..<\(entry.end) overlap '\(furthest.name)' (\(furthest.begin)..<\(furthest.end))")
            }
            if entry.end > (furthest?.end ?? 0) { furthest = entry }
        }
    }
}
