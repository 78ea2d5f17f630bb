import Foundation
@testable import SAMFiles
import SAMTensor
import SAMTestSupport
import Testing

/// `.samw` rows of quantized weights (`q8`, `q4`): format version 2 for files holding them, version 1
/// (as before) for the rest; a row's bytes checked against its layout before use.
@Suite("SAMW quantized rows")
struct SAMWQuantizedTests {
    let folder: String

    init() throws { folder = try TestPaths.temporaryFolder("samw-quantized") }

    static func weight(_ scheme: QuantizedWeight.Scheme) throws -> QuantizedWeight {
        let values = (0..<(4 * 64)).map { Float($0 % 17) / 8 - 1 }
        return try values.withUnsafeBufferPointer { try QuantizedWeight(quantizing: $0, shape: [4, 64], scheme: scheme) }
    }

    func write(_ rows: [SAMWRow], _ name: String) throws -> String {
        let path = folder + "/" + name
        try SAMWWriter.write(rows: rows, metadata: .null, to: path)
        return path
    }

    static func version(_ path: String) throws -> UInt32 {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data[8..<12].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    }

    @Test("a file with quantized rows is version 2 and reads them back byte for byte; without, version 1")
    func roundTrip() throws {
        let plain = SAMWRow(name: "bias", tensor: Tensor(shape: [4], floats: [1, 2, 3, 4]))
        let rows = [plain, SAMWRow(name: "q4.weight", quantized: try Self.weight(.int4)),
                    SAMWRow(name: "q8.weight", quantized: try Self.weight(.int8))]
        let path = try write(rows, "quantized.samw")
        #expect(try Self.version(path) == 2)
        let file = try SAMWFile(path: path)
        try file.verifyChecksums()
        #expect(file.version == 2)
        #expect(try Array(file.tensors().keys) == ["bias"])
        let quantized = try file.quantizedWeights()
        for scheme in QuantizedWeight.Scheme.allCases {
            let read = try #require(quantized["\(scheme.rawValue).weight"])
            #expect(read.scheme == scheme && read.shape == [4, 64])
            let written = try Self.weight(scheme)
            withExtendedLifetime((written, file)) {
                #expect(Array(read.storage.bytes) == Array(written.storage.bytes))
            }
        }
        #expect(throws: FormatError.self) { try file.tensor(named: "q8.weight") }
        #expect(try Self.version(try write([plain], "plain.samw")) == 1)
    }

    @Test("a q8 row in a version 1 file, a row of the wrong length and a newer version are refused by name")
    func refusals() throws {
        let path = try write([SAMWRow(name: "q8.weight", quantized: try Self.weight(.int8))], "edit.samw")
        var data = try Data(contentsOf: URL(fileURLWithPath: path))

        var v1 = data
        v1[8] = 1
        let v1Path = folder + "/v1.samw"
        try v1.write(to: URL(fileURLWithPath: v1Path))
        let v1Error = #expect(throws: FormatError.self) { try SAMWFile(path: v1Path) }
        #expect(v1Error?.tensor == "q8.weight")
        #expect(v1Error?.message.contains("version 1") == true)

        var v3 = data
        v3[8] = 3
        let v3Path = folder + "/v3.samw"
        try v3.write(to: URL(fileURLWithPath: v3Path))
        let v3Error = #expect(throws: FormatError.self) { try SAMWFile(path: v3Path) }
        #expect(v3Error?.message.contains("version 3") == true)

        // The shape [4, 64] edited to [4, 65] in the header: the row no longer holds its layout.
        let header = String(decoding: data, as: UTF8.self)
        let range = try #require(header.range(of: "[4,64]"))
        let offset = header.utf8.distance(from: header.startIndex, to: range.lowerBound)
        data.replaceSubrange(offset..<(offset + 6), with: Array("[4,65]".utf8))
        let shapePath = folder + "/shape.samw"
        try data.write(to: URL(fileURLWithPath: shapePath))
        let shapeError = #expect(throws: FormatError.self) { try SAMWFile(path: shapePath) }
        #expect(shapeError?.tensor == "q8.weight")
    }

    /// The file with `scheme`'s weight [4, 64] whose second scale's bytes are `scaleBytes`.
    func withSecondScale(_ scheme: QuantizedWeight.Scheme, _ scaleBytes: [UInt8], _ name: String) throws -> SAMWFile {
        let path = try write([SAMWRow(name: "w", quantized: try Self.weight(scheme))], name)
        let offset = try #require(try SAMWFile(path: path).entry(named: "w")).offset + scaleBytes.count
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        data.replaceSubrange(offset..<(offset + scaleBytes.count), with: scaleBytes)
        try data.write(to: URL(fileURLWithPath: path))
        return try SAMWFile(path: path)
    }

    @Test("a scale that makes elements NaN or infinite is refused by tensor and index; large finite ones are kept")
    func nonFiniteScales() throws {
        func bytes(_ value: Float) -> [UInt8] { withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) } }
        // q8: NaN, infinity, and a finite scale whose code 127 overflows (3e38 × 127).
        for (index, scale) in [Float.nan, .infinity, -.infinity, 3e38].enumerated() {
            let file = try withSecondScale(.int8, bytes(scale), "q8-\(index).samw")
            let error = #expect(throws: FormatError.self) { try file.quantizedWeights() }
            #expect(error?.tensor == "w" && error?.message.contains("q8 scale 1") == true, "\(scale): \(String(describing: error))")
        }
        // A scale whose every code stays finite (128 × it is below float32's largest) reads back.
        let large = try withSecondScale(.int8, bytes(Float.greatestFiniteMagnitude / 256), "q8-large.samw")
        #expect(try large.quantizedWeights()["w"]?.floats().allSatisfy(\.isFinite) == true)
        // q4: float16 infinity (0x7C00) and NaN (0x7E00) as a group's scale; 65504 (the largest) is finite.
        for (index, half) in ([[0x00, 0x7C], [0x00, 0x7E], [0x00, 0xFC]] as [[UInt8]]).enumerated() {
            let file = try withSecondScale(.int4, half, "q4-\(index).samw")
            let error = #expect(throws: FormatError.self) { try file.quantizedWeights() }
            #expect(error?.tensor == "w" && error?.message.contains("q4 scale 1") == true, "\(half): \(String(describing: error))")
        }
        let largest = try withSecondScale(.int4, [0xFF, 0x7B], "q4-largest.samw")
        #expect(try largest.quantizedWeights()["w"]?.floats().allSatisfy(\.isFinite) == true)
    }
}
