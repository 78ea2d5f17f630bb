import Foundation
import SAMFormats
import SAMTestSupport
import SAMTensor
import Testing

@Suite(".samw checksums: verified in parallel pieces, equal to zlib's CRC-32 of the whole")
struct ChecksumTests {
    /// Tensors of 0 bytes, a few bytes, and 20 MB (three 8 MB pieces joined with crc32_combine):
    /// the table the writer records (one CRC over each whole tensor) verifies, and a change in the
    /// last piece of the large tensor is found and named.
    @Test("pieces joined give the whole tensor's CRC-32; a flipped byte names its tensor")
    func piecesAndDamage() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("crc-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var random = SplitMix64(seed: 7)
        let large = Tensor(shape: [5 << 20], floats: (0..<(5 << 20)).map { _ in Float(random.next() % 1000) / 7 })
        let tensors = [(name: "empty", tensor: Tensor(shape: [0], floats: [])), (name: "small", tensor: Tensor(shape: [3], floats: [1, 2, 3])),
                       (name: "large", tensor: large)]
        let path = folder + "/m.samw"
        try SAMWWriter.write(tensors: tensors, metadata: .object([:]), to: path)
        let file = try SAMWFile(path: path)
        try file.verifyChecksums(of: ["large", "small", "empty"])
        let entry = try #require(file.entry(named: "large"))
        // The writer's CRC is zlib's over the whole tensor in one call: the pieces agree with it.
        let stored = try Data(contentsOf: URL(fileURLWithPath: path))[entry.offset..<(entry.offset + entry.length)]
        #expect(entry.crc32 == stored.withUnsafeBytes { CRC32.checksum($0) })

        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[entry.offset + entry.length - 3] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: path))
        let damaged = try SAMWFile(path: path)
        try damaged.verifyChecksums(of: ["small", "empty"])  // only the tensors asked for
        do {
            try damaged.verifyChecksums(of: ["small", "large"])
            Issue.record("a flipped byte in the last piece went unnoticed")
        } catch {
            #expect(error.tensor == "large" && error.code == .corrupt, "\(error)")
        }
    }
}

