import Foundation
import SAMParallel
import SAMTensor

/// Writes a .samw file: preamble, JSON header, then every tensor's bytes at 64-byte-aligned offsets,
/// streamed to a temporary sibling that is renamed into place (`AtomicFileWriter`). Besides the
/// header, nothing the size of the model is held: the tensors are written from where they are, and
/// rows made on demand (`SAMWRow.Make`) are made one at a time as they are written.
package enum SAMWWriter {
    package static func write(tensors: [(name: String, tensor: Tensor)], metadata: JSONValue, to path: String,
                             policy: OutputPolicy = .replace) throws(FormatError) {
        try write(rows: tensors.map { SAMWRow(name: $0.name, tensor: $0.tensor) }, metadata: metadata, to: path, policy: policy)
    }

    package static func write(rows tensors: [SAMWRow], metadata: JSONValue, to path: String,
                             policy: OutputPolicy = .replace) throws(FormatError) {
        var names = Set<String>()
        for row in tensors where !names.insert(row.name).inserted {
            throw FormatError(.corrupt, file: path, tensor: row.name, "two tensors share this name")
        }
        let checksums = [UInt32](unsafeUninitializedCapacity: tensors.count) { buffer, initialized in
            // Tensors are independent: checksum them on every core. Rows made on demand bring theirs.
            let out = buffer.baseAddress!
            Workers.forEach(tensors.count) { index in
                out[index] = tensors[index].crc32 ?? CRC32.checksum(tensors[index].heldBytes!.bytes)
            }
            initialized = tensors.count
        }
        let (header, entries) = try layOut(tensors, checksums: checksums, metadata: metadata, path: path)

        let writer = try AtomicFileWriter(path: path, policy: policy)
        var preamble = SAMWLayout.magic
        append(tensors.contains(where: \.isQuantized) ? SAMWLayout.quantizedVersion : SAMWLayout.plainVersion, to: &preamble)
        append(UInt32(0), to: &preamble)
        append(UInt64(header.count), to: &preamble)
        try writer.write(preamble)
        try writer.write(header)
        var position = SAMWLayout.preambleSize + header.count
        // Rows are made a few at a time on every core, then written in order: memory holds one batch.
        for batch in stride(from: 0, to: tensors.count, by: Workers.count).map({ $0..<min($0 + Workers.count, tensors.count) }) {
            let made = [Result<TensorStorage, FormatError>?](unsafeUninitializedCapacity: batch.count) { buffer, initialized in
                let out = buffer.baseAddress!
                for offset in 0..<batch.count { (out + offset).initialize(to: nil) }
                Workers.forEach(batch.count) { offset in
                    let index = batch.lowerBound + offset
                    guard entries[index].length > 0 else { return }
                    out[offset] = Result { () throws(FormatError) in try checkedBytes(tensors[index], entries[index], path: path) }
                }
                initialized = batch.count
            }
            for (offset, index) in batch.enumerated() where entries[index].length > 0 {
                let bytes = try made[offset]!.get()
                try writer.writeZeros(entries[index].offset - position)
                try writer.write(bytes.bytes)
                position = entries[index].offset + entries[index].length
            }
        }
        // The file ends where the last entry does, an empty one included (its offset is in the file).
        let end = entries.last.map { $0.offset + $0.length } ?? align(SAMWLayout.preambleSize + header.count)
        try writer.writeZeros(end - position)
        try writer.commit()
    }

    /// The row's bytes; made ones must be what the header says (their maker read an input again,
    /// which may have changed since).
    private static func checkedBytes(_ row: SAMWRow, _ entry: SAMWEntry, path: String) throws(FormatError) -> TensorStorage {
        let bytes = try row.bytes()
        guard row.heldBytes == nil else { return bytes }
        guard bytes.bytes.count == entry.length, CRC32.checksum(bytes.bytes) == entry.crc32 else {
            throw FormatError(.writeFailed, file: path, tensor: row.name,
                              "its bytes changed between checksumming and writing (an input changed during the conversion?)")
        }
        return bytes
    }

    /// The header bytes (JSON padded with spaces) and the table it holds. The data offsets depend on
    /// the header's own length: lay the data out after a guess, and grow the guess until the encoded
    /// header fits.
    private static func layOut(_ tensors: [SAMWRow], checksums: [UInt32], metadata: JSONValue,
                               path: String) throws(FormatError) -> (header: [UInt8], entries: [SAMWEntry]) {
        var reserved = 4096
        while true {
            var entries: [SAMWEntry] = []
            var offset = align(SAMWLayout.preambleSize + reserved)
            for (row, crc32) in zip(tensors, checksums) {
                entries.append(SAMWEntry(name: row.name, dtype: row.dtype, shape: row.shape,
                                         offset: offset, length: row.byteCount, crc32: crc32))
                offset = align(offset + row.byteCount)
            }
            let encoded: Data
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                encoded = try encoder.encode(SAMWHeader(metadata: metadata, tensors: entries))
            } catch {
                throw FormatError(.writeFailed, file: path, "cannot encode the header: \(error)")
            }
            if encoded.count > reserved {
                reserved = encoded.count + 4096
                continue
            }
            // The header is padded with spaces to its reserved length (valid JSON whitespace).
            return (Array(encoded) + [UInt8](repeating: 0x20, count: reserved - encoded.count), entries)
        }
    }

    static func align(_ value: Int) -> Int {
        (value + SAMWLayout.alignment - 1) / SAMWLayout.alignment * SAMWLayout.alignment
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
