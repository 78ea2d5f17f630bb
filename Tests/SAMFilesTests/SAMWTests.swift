import Foundation
@testable import SAMFiles
import Testing
import SAMTensor
import SAMTestSupport

@Suite("SAMW model file")
struct SAMWTests {
    let folder: String

    init() throws { folder = try TestPaths.temporaryFolder("samw-tests") }

    func sampleTensors() -> [(name: String, tensor: Tensor)] {
        [("a.weight", Tensor(shape: [2, 3], floats: [0, 0.5, -1, 2, 3.25, -4])),
         ("a.bias", Tensor(shape: [3], floats: [1, 2, 3])),
         ("empty", Tensor(shape: [0, 4], floats: []))]
    }

    @Test("Round trip keeps names, shapes, bytes and metadata; offsets are 64-byte aligned")
    func roundTrip() throws {
        let path = folder + "/model.samw"
        let metadata = JSONValue.object(["family": .string("mobile_sam"), "maxPoints": .number(100)])
        try SAMWWriter.write(tensors: sampleTensors(), metadata: metadata, to: path)
        let file = try SAMWFile(path: path)
        #expect(file.metadata == metadata)
        #expect(file.names == ["a.weight", "a.bias", "empty"])
        for (name, tensor) in sampleTensors() {
            #expect(try file.tensor(named: name).isBitwiseEqual(to: tensor))
            #expect(file.entry(named: name)!.offset % 64 == 0)
        }
        try file.verifyChecksums()
    }

    @Test("CRC-32 matches zlib's for a known string")
    func crcMatchesZlib() {
        // zlib.crc32(b"123456789") == 0xCBF43926, the standard check value.
        let value = Array("123456789".utf8).withUnsafeBytes { CRC32.checksum($0) }
        #expect(value == 0xCBF4_3926)
    }

    @Test("Truncated, corrupt and tampered files are refused with the file and tensor named")
    func badFiles() throws {
        let path = folder + "/model.samw"
        try SAMWWriter.write(tensors: sampleTensors(), metadata: .null, to: path)
        let good = try Data(contentsOf: URL(fileURLWithPath: path))

        let truncated = folder + "/truncated.samw"
        try good.prefix(good.count - 8).write(to: URL(fileURLWithPath: truncated))
        let truncatedError = #expect(throws: FormatError.self) { try SAMWFile(path: truncated) }
        #expect(truncatedError?.code == .truncated)
        #expect(truncatedError?.file == truncated)
        #expect(truncatedError?.tensor != nil)

        let badMagic = folder + "/magic.samw"
        var magicBytes = good
        magicBytes[0] = 0x58
        try magicBytes.write(to: URL(fileURLWithPath: badMagic))
        #expect(throws: FormatError.self) { try SAMWFile(path: badMagic) }

        let flipped = folder + "/flipped.samw"
        var flippedBytes = good
        let offset = try SAMWFile(path: path).entry(named: "a.bias")!.offset
        flippedBytes[offset] ^= 0x01
        try flippedBytes.write(to: URL(fileURLWithPath: flipped))
        let checksumError = #expect(throws: FormatError.self) { try SAMWFile(path: flipped).verifyChecksums() }
        #expect(checksumError?.tensor == "a.bias")

        let hugeHeader = folder + "/huge.samw"
        var hugeBytes = good
        hugeBytes.replaceSubrange(16..<24, with: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F])
        try hugeBytes.write(to: URL(fileURLWithPath: hugeHeader))
        #expect(throws: FormatError.self) { try SAMWFile(path: hugeHeader) }

        // Table rows whose members are JSON but not what a row holds: each refused naming row and member.
        let headerLength = Int(good[16..<24].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self).littleEndian })
        let header = String(decoding: good[24..<(24 + headerLength)], as: UTF8.self)
        for (label, from, to, mentions) in [("fractional offset", "\"offset\":", "\"offset\":0.5,\"was\":", "\"offset\""),
                                            ("crc32 past 32 bits", "\"crc32\":", "\"crc32\":4294967296,\"was\":", "\"crc32\""),
                                            ("shape of strings", "\"shape\":[", "\"shape\":[\"2\",", "\"shape\""),
                                            ("no name", "\"name\":", "\"label\":", "\"name\"")] {
            guard let range = header.range(of: from) else { Issue.record("\(label): no \(from) in the header"); continue }
            var edited = header
            edited.replaceSubrange(range, with: to)
            var bytes = Data(good.prefix(16))
            withUnsafeBytes(of: UInt64(edited.utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: edited.utf8)
            bytes.append(good.suffix(from: 24 + headerLength))
            let tampered = folder + "/row.samw"
            try bytes.write(to: URL(fileURLWithPath: tampered))
            let error = #expect(throws: FormatError.self, "\(label)") { try SAMWFile(path: tampered) }
            #expect(error?.code == .corrupt, "\(label)")
            #expect(error.map { "\($0)".contains("tensor row 0") && "\($0)".contains(mentions) } == true, "\(label): \(String(describing: error))")
        }
    }

    @Test("Duplicate tensor names are refused at write time")
    func duplicateNames() {
        let tensors = [("x", Tensor(shape: [1], floats: [1])), ("x", Tensor(shape: [1], floats: [2]))]
        #expect(throws: FormatError.self) { try SAMWWriter.write(tensors: tensors, metadata: .null, to: folder + "/dup.samw") }
    }
}

/// `make check-reference-set` runs this (the filter matches the `FullSizeSet` type name).
@Suite("Full-size set: checksums", .enabled(if: TestPaths.fullSizeSetIsPresent))
struct FullSizeSetChecksumTests {
    @Test("A file's SHA-256 matches the full-size set manifest's")
    func fullSizeSetFile() throws {
        // manifest.json of the full-size set lists image_points_embeddings.bin with this sha256.
        #expect(try SHA256.hex(ofFile: TestPaths.fullSizeSet + "/image_points_embeddings.bin")
                == "5ff23179a3c9310bef03ba357ac9ea3afe0ff2d73a6c42fcc74bf60e7f2b5739")
    }
}
