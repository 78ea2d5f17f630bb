import Foundation
import Testing
@testable import SAMEverything

/// The committed fixtures (written by converters/make_amg_fixtures.py from upstream's own functions).
enum Fixtures {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func json<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T {
        let data = try Data(contentsOf: folder.appendingPathComponent(name))
        return try JSONDecoder().decode(T.self, from: data)
    }

    static func npy(_ name: String) throws -> NPYArray {
        try NPYArray(data: Data(contentsOf: folder.appendingPathComponent(name)), name: name)
    }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
}

/// A little-endian, C-order .npy file as numpy writes it (format 1.0 or 2.0).
struct NPYArray {
    let descr: String
    let shape: [Int]
    let payload: Data

    init(data: Data, name: String) throws {
        let bytes = [UInt8](data)
        guard bytes.count >= 10, bytes[0] == 0x93, Array(bytes[1...5]) == Array("NUMPY".utf8) else {
            throw FixtureError(description: "\(name): not an .npy file")
        }
        let major = bytes[6]
        let headerLength: Int
        let headerStart: Int
        if major == 1 {
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8
            headerStart = 10
        } else {
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16 | Int(bytes[11]) << 24
            headerStart = 12
        }
        let header = String(decoding: bytes[headerStart..<(headerStart + headerLength)], as: UTF8.self)
        guard header.contains("'fortran_order': False") else { throw FixtureError(description: "\(name): Fortran order") }
        guard let descrRange = header.range(of: "'descr': '") else { throw FixtureError(description: "\(name): no descr") }
        let afterDescr = header[descrRange.upperBound...]
        descr = String(afterDescr.prefix { $0 != "'" })
        guard let shapeStart = header.range(of: "'shape': (") else { throw FixtureError(description: "\(name): no shape") }
        let shapeText = header[shapeStart.upperBound...].prefix { $0 != ")" }
        shape = shapeText.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        payload = data.subdata(in: (headerStart + headerLength)..<data.count)
    }

    var count: Int { shape.reduce(1, *) }

    private func values<T>(_ expected: String, _ type: T.Type) throws -> [T] {
        guard descr == expected else { throw FixtureError(description: "dtype \(descr), expected \(expected)") }
        guard payload.count == count * MemoryLayout<T>.size else { throw FixtureError(description: "payload size") }
        return payload.withUnsafeBytes { raw in (0..<count).map { raw.loadUnaligned(fromByteOffset: $0 * MemoryLayout<T>.size, as: T.self) } }
    }

    func float32() throws -> [Float] { try values("<f4", Float.self) }
    func float64() throws -> [Double] { try values("<f8", Double.self) }
    func int64() throws -> [Int] { try values("<i8", Int64.self).map { Int($0) } }
    func uint8() throws -> [UInt8] { try values("|u1", UInt8.self) }
}

/// The first index where two sequences differ (or where one ends), described, or nil if equal.
func firstDifference<T: Equatable>(_ actual: [T], _ expected: [T], equal: (T, T) -> Bool = { $0 == $1 }) -> String? {
    for i in 0..<min(actual.count, expected.count) where !equal(actual[i], expected[i]) {
        return "first difference at [\(i)]: got \(actual[i]), expected \(expected[i])"
    }
    if actual.count != expected.count { return "got \(actual.count) elements, expected \(expected.count)" }
    return nil
}

/// Expects two sequences equal element by element; on failure, records the first difference.
func expectEqualElements<T: Equatable>(_ actual: [T], _ expected: [T], _ context: @autoclosure () -> String,
                                       equal: (T, T) -> Bool = { $0 == $1 },
                                       sourceLocation: SourceLocation = #_sourceLocation) {
    if let difference = firstDifference(actual, expected, equal: equal) {
        Issue.record("\(context()): \(difference)", sourceLocation: sourceLocation)
    }
}

/// The mask's rows as text ("1" set, "." unset), for failure messages of small masks.
func picture(_ mask: BinaryMask) -> String {
    guard mask.width * mask.height <= 4096 else { return mask.description }
    return (0..<mask.height).map { y in String((0..<mask.width).map { mask[x: $0, y: y] ? "1" : "." }) }.joined(separator: "\n")
}

/// The first pixel (x, y) where two masks differ, described, or nil.
func firstPixelDifference(_ actual: BinaryMask, _ expected: BinaryMask) -> String? {
    guard actual.width == expected.width, actual.height == expected.height else {
        return "size \(actual.width)x\(actual.height), expected \(expected.width)x\(expected.height)"
    }
    for i in 0..<actual.pixels.count where actual.pixels[i] != expected.pixels[i] {
        return "first difference at x \(i % actual.width), y \(i / actual.width): got \(actual.pixels[i]), expected \(expected.pixels[i])"
    }
    return nil
}

/// A seeded generator (SplitMix64), for the property tests.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Float {
    init(bits: Int) { self.init(bitPattern: UInt32(truncatingIfNeeded: bits)) }
}
