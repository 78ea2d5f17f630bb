import Foundation
import SAMTensor

/// A .samw model file, memory-mapped. Opening checks the preamble, the header and every table row
/// (offset, length, alignment, dtype, shape) against the file before any tensor is used; tensors
/// then borrow the mapped pages, so loading costs page faults, not copies.
public final class SAMWFile: @unchecked Sendable {
    /// The path the file was opened from.
    public let path: String
    /// The header's metadata (for a model file: `ModelFileMetadata`, read by `SAMModelFile`).
    public let metadata: JSONValue
    package let entries: [SAMWEntry]
    /// The format version in the preamble: 1, or 2 when the file holds quantized weights.
    package let version: UInt32
    private let file: MappedFile
    private let index: [String: Int]

    /// Maps the file at `path` and checks its preamble, header and tensor table; a file that fails a
    /// check is a `FormatError` naming it. Checksums are checked by `verifyChecksums()`.
    public init(path: String) throws(FormatError) {
        self.path = path
        file = try MappedFile(path: path)
        let bytes = file.bytes
        guard bytes.count >= SAMWLayout.preambleSize, Array(bytes[0..<8]) == SAMWLayout.magic else {
            throw FormatError(.corrupt, file: path, "not a .samw file (bad magic)")
        }
        let version = bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian
        guard (SAMWLayout.plainVersion...SAMWLayout.newestVersion).contains(version) else {
            throw FormatError(.unsupported, file: path, ".samw version \(version) (this build reads versions "
                + "\(SAMWLayout.plainVersion)...\(SAMWLayout.newestVersion)); update the toolkit or convert the model again")
        }
        self.version = version
        let headerLength = bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian
        guard headerLength <= UInt64(SAMWLayout.maximumHeaderBytes) else {
            throw FormatError(.corrupt, file: path, "header length \(headerLength) is implausibly large")
        }
        let headerBytes = try file.slice(offset: SAMWLayout.preambleSize, length: Int(headerLength))
        let header: SAMWHeader
        do {
            header = try SAMWHeader(json: try JSONParser.parse(headerBytes))
        } catch {
            throw FormatError(.corrupt, file: path, "header is not valid JSON for a .samw table: \(error)")
        }
        let dataStart = SAMWLayout.preambleSize + Int(headerLength)
        var index: [String: Int] = [:]
        for (position, entry) in header.tensors.enumerated() {
            try Self.check(entry, version: version, dataStart: dataStart, fileSize: bytes.count, file: path)
            if index.updateValue(position, forKey: entry.name) != nil {
                throw FormatError(.corrupt, file: path, tensor: entry.name, "listed twice in the tensor table")
            }
        }
        metadata = header.metadata
        entries = header.tensors
        self.index = index
    }

    private static func check(_ entry: SAMWEntry, version: UInt32, dataStart: Int, fileSize: Int, file: String) throws(FormatError) {
        let expected: Int
        if let dtype = SAMWLayout.dtype(named: entry.dtype) {
            do { expected = try Shape.byteCount(entry.shape, dtype) } catch {
                throw FormatError(.corrupt, file: file, tensor: entry.name, "\(error)")
            }
        } else if let scheme = SAMWLayout.scheme(named: entry.dtype) {
            guard version >= SAMWLayout.quantizedVersion else {
                throw FormatError(.corrupt, file: file, tensor: entry.name,
                                  "dtype '\(entry.dtype)' in a version \(version) file (quantized weights need version \(SAMWLayout.quantizedVersion))")
            }
            do { expected = try QuantizedWeight.layout(scheme, shape: entry.shape).byteCount } catch {
                throw FormatError(.corrupt, file: file, tensor: entry.name, error.description)
            }
        } else {
            throw FormatError(.unsupported, file: file, tensor: entry.name, "dtype '\(entry.dtype)'")
        }
        guard entry.length == expected else {
            throw FormatError(.sizeMismatch, file: file, tensor: entry.name,
                              "table says \(entry.length) bytes, \(entry.dtype) \(Shape.text(entry.shape)) needs \(expected)")
        }
        let (end, overflow) = entry.offset.addingReportingOverflow(entry.length)
        guard entry.offset >= dataStart, !overflow, end <= fileSize else {
            throw FormatError(.truncated, file: file, tensor: entry.name,
                              "data \(entry.offset)..<\(overflow ? Int.max : end) lies outside the data region \(dataStart)..<\(fileSize)")
        }
        guard entry.offset % SAMWLayout.alignment == 0 else {
            throw FormatError(.corrupt, file: file, tensor: entry.name, "offset \(entry.offset) is not \(SAMWLayout.alignment)-byte aligned")
        }
    }

    /// The stored tensors' names, in table order.
    public var names: [String] { entries.map(\.name) }

    package func entry(named name: String) -> SAMWEntry? { index[name].map { entries[$0] } }

    /// The tensor `name`, borrowing the mapped file (no copy).
    public func tensor(named name: String) throws(FormatError) -> Tensor {
        guard let entry = entry(named: name) else {
            throw FormatError(.missingTensor, file: path, tensor: name, "not in the tensor table")
        }
        let bytes = try file.slice(offset: entry.offset, length: entry.length, tensor: name)
        guard let dtype = SAMWLayout.dtype(named: entry.dtype) else {
            throw FormatError(.unsupported, file: path, tensor: name, "dtype '\(entry.dtype)' is a quantized weight, not a plain tensor")
        }
        // init checked dtype, shape and length of every row against each other and the file.
        return Tensor(dtype: dtype, shape: entry.shape, checkedStorage: TensorStorage(borrowing: bytes, owner: file))
    }

    /// The quantized weight `name` (a `q8` or `q4` row), borrowing the mapped file.
    package func quantizedWeight(named name: String) throws(FormatError) -> QuantizedWeight {
        guard let entry = entry(named: name) else {
            throw FormatError(.missingTensor, file: path, tensor: name, "not in the tensor table")
        }
        guard let scheme = SAMWLayout.scheme(named: entry.dtype) else {
            throw FormatError(.unsupported, file: path, tensor: name, "dtype '\(entry.dtype)' is not a quantized weight")
        }
        let bytes = try file.slice(offset: entry.offset, length: entry.length, tensor: name)
        let weight = QuantizedWeight(scheme: scheme, shape: entry.shape, checkedStorage: TensorStorage(borrowing: bytes, owner: file))
        // A scale that makes elements NaN or infinite would surface only as a stage's NaN output.
        if let bad = weight.firstNonFiniteScale {
            throw FormatError(.corrupt, file: path, tensor: name,
                              "\(scheme.rawValue) scale \(bad.index) (\(bad.scale)) gives elements that are not finite")
        }
        return weight
    }

    /// Whether row `entry` holds a quantized weight.
    package static func isQuantized(_ entry: SAMWEntry) -> Bool { SAMWLayout.scheme(named: entry.dtype) != nil }

    /// Every plain tensor, by name (quantized weights: `quantizedWeights()`).
    package func tensors() throws(FormatError) -> [String: Tensor] {
        var result: [String: Tensor] = [:]
        for entry in entries where !Self.isQuantized(entry) { result[entry.name] = try tensor(named: entry.name) }
        return result
    }

    /// Every quantized weight, by name.
    package func quantizedWeights() throws(FormatError) -> [String: QuantizedWeight] {
        var result: [String: QuantizedWeight] = [:]
        for entry in entries where Self.isQuantized(entry) { result[entry.name] = try quantizedWeight(named: entry.name) }
        return result
    }

    /// Recomputes every tensor's CRC-32; throws on the first that differs (bit rot, tampering).
    public func verifyChecksums() throws(FormatError) {
        try verifyChecksums(of: names)
    }

    /// Recomputes the CRC-32 of the tensors named, on every core (large tensors in pieces joined with
    /// zlib's `crc32_combine`), and throws naming the first whose checksum differs from the table's.
    /// Measured with `sambench load` on 2 cores (AVX-512, PCLMULQDQ folding, file in the page cache):
    /// about 3 ms for MobileSAM's 39 MB in a fresh process, page faults included.
    package func verifyChecksums<Names: Sequence>(of names: Names) throws(FormatError) where Names.Element == String {
        var checked: [SAMWEntry] = []
        for name in names {
            guard let entry = entry(named: name) else {
                throw FormatError(.missingTensor, file: path, tensor: name, "not in the tensor table")
            }
            checked.append(entry)
        }
        let actual = SAMWChecksums.compute(checked.map { UnsafeRawBufferPointer(rebasing: file.bytes[$0.offset..<($0.offset + $0.length)]) })
        for (entry, crc) in zip(checked, actual) where crc != entry.crc32 {
            throw FormatError(.corrupt, file: path, tensor: entry.name,
                              "checksum \(String(crc, radix: 16)) does not match the table's \(String(entry.crc32, radix: 16)) "
                                + "(the file was damaged or edited after it was written)")
        }
    }
}
