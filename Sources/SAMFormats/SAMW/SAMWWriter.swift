import Foundation
import SAMTensor

/// Writes a .samw file: preamble, JSON header, then every tensor's bytes at 64-byte-aligned offsets.
/// The whole file is written to a temporary sibling and renamed into place.
public enum SAMWWriter {
    public static func write(tensors: [(name: String, tensor: Tensor)], metadata: JSONValue, to path: String) throws(FormatError) {
        var names = Set<String>()
        for (name, _) in tensors where !names.insert(name).inserted {
            throw FormatError(.corrupt, file: path, tensor: name, "two tensors share this name")
        }
        // The header holds the data offsets, which depend on the header's own length: lay the data out
        // after a header size guess, and grow the guess until the encoded header fits.
        var reserved = 4096
        while true {
            var entries: [SAMWEntry] = []
            var offset = align(SAMWLayout.preambleSize + reserved)
            for (name, tensor) in tensors {
                entries.append(SAMWEntry(name: name, dtype: SAMWLayout.dtypeName(tensor.dtype), shape: tensor.shape,
                                         offset: offset, length: tensor.byteCount, crc32: CRC32.checksum(tensor.storage.bytes)))
                offset = align(offset + tensor.byteCount)
            }
            let header: Data
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                header = try encoder.encode(SAMWHeader(metadata: metadata, tensors: entries))
            } catch {
                throw FormatError(.writeFailed, file: path, "cannot encode the header: \(error)")
            }
            if header.count > reserved {
                reserved = header.count + 4096
                continue
            }
            var bytes = [UInt8](repeating: 0, count: entries.last.map { $0.offset + $0.length } ?? align(SAMWLayout.preambleSize + reserved))
            bytes.replaceSubrange(0..<8, with: SAMWLayout.magic)
            store(SAMWLayout.version, at: 8, in: &bytes)
            store(UInt64(reserved), at: 16, in: &bytes)
            // The header is padded with spaces to its reserved length (valid JSON whitespace).
            let headerBytes = Array(header) + [UInt8](repeating: 0x20, count: reserved - header.count)
            bytes.replaceSubrange(SAMWLayout.preambleSize..<(SAMWLayout.preambleSize + reserved), with: headerBytes)
            for (entry, (_, tensor)) in zip(entries, tensors) where entry.length > 0 {
                bytes.replaceSubrange(entry.offset..<(entry.offset + entry.length), with: tensor.storage.bytes)
            }
            try AtomicFile.write(bytes, to: path)
            return
        }
    }

    static func align(_ value: Int) -> Int {
        (value + SAMWLayout.alignment - 1) / SAMWLayout.alignment * SAMWLayout.alignment
    }

    private static func store<T: FixedWidthInteger>(_ value: T, at offset: Int, in bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<(offset + $0.count), with: $0) }
    }
}
