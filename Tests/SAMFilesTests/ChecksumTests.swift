import Foundation
@testable import SAMFiles
import SAMTestSupport
import SAMTensor
import Testing

@Suite(".samw checksums: verified in parallel pieces, equal to zlib's CRC-32 of the whole")
struct ChecksumTests {
    /// The CRC one bit at a time, straight from the definition (reflected IEEE polynomial 0xEDB88320,
    /// register inverted before and after, as zlib's crc32 continues from `crc`).
    static func bitwise(_ crc: UInt32, _ bytes: some Sequence<UInt8>) -> UInt32 {
        var register = ~crc
        for byte in bytes {
            register ^= UInt32(byte)
            for _ in 0..<8 { register = register & 1 != 0 ? (register >> 1) ^ 0xEDB8_8320 : register >> 1 }
        }
        return ~register
    }

    /// The folded path (whole 64-byte blocks, where the CPU has PCLMULQDQ) and the table path give the
    /// definition's CRC at every length around the block size and when continued from any earlier CRC.
    @Test("CRC-32 equals the bit-at-a-time definition at every length and split")
    func matchesDefinition() {
        #expect(CRC32.checksum(UnsafeRawBufferPointer(start: nil, count: 0)) == 0)
        let check = Array("123456789".utf8)
        #expect(check.withUnsafeBytes { CRC32.checksum($0) } == 0xCBF4_3926)
        var random = SplitMix64(seed: 11)
        let data = (0..<(1 << 16) + 77).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        data.withUnsafeBytes { all in
            for length in [1, 15, 16, 63, 64, 65, 127, 128, 129, 191, 192, 255, 256, 1000, 4096 + 17, all.count] {
                let part = UnsafeRawBufferPointer(rebasing: all[0..<length])
                #expect(CRC32.checksum(part) == Self.bitwise(0, data[0..<length]), "length \(length)")
            }
            for split in [0, 1, 3, 64, 100, 4099] {
                let first = CRC32.checksum(UnsafeRawBufferPointer(rebasing: all[0..<split]))
                let whole = CRC32.update(first, UnsafeRawBufferPointer(rebasing: all[split...]))
                #expect(whole == Self.bitwise(0, data), "split at \(split)")
            }
        }
    }

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

