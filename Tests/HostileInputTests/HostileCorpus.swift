import Foundation
import SAMTestSupport

/// One hostile input: a name for messages, its bytes, and whether a reader must reject it
/// (`strict`) or may accept it (a bit flip inside weight data can leave a valid file).
struct HostileVariant {
    var name: String
    var bytes: Data
    var strict: Bool
}

enum HostileCorpus {
    static let root = TestPaths.packageRoot
    static let tiny = TestPaths.tinyReferences

    /// Truncations at 0, 1, 10, 1/3, 1/2, len-1; `flips` seeded single-bit flips; wrong magic.
    /// Bit flips in the first `strictFlipPrefix` bytes (the magic) must be rejected; others may pass.
    static func mutations(of good: Data, seed: UInt64, flips: Int = 8, magicLength: Int = 4) -> [HostileVariant] {
        var variants: [HostileVariant] = []
        let n = good.count
        for cut in Set([0, 1, 10, n / 3, n / 2, n - 1]).sorted() where cut < n {
            variants.append(HostileVariant(name: "truncated@\(cut)", bytes: good.prefix(cut), strict: true))
        }
        var random = SplitMix64(seed: seed)  // the same bit flips on every run
        for index in 0..<flips {
            // Half the flips land in the first 4 KiB (headers, structure), half anywhere.
            let limit = index % 2 == 0 ? min(n, 4096) : n
            let position = Int(random.next() % UInt64(limit))
            let bit = UInt8(1) << UInt8(random.next() % 8)
            var bytes = good
            bytes[bytes.startIndex + position] ^= bit
            variants.append(HostileVariant(name: "bitflip@\(position)^\(bit)", bytes: bytes,
                                           strict: position < magicLength))
        }
        var wrongMagic = good
        for index in 0..<min(magicLength, n) { wrongMagic[wrongMagic.startIndex + index] ^= 0xFF }
        variants.append(HostileVariant(name: "wrong-magic", bytes: wrongMagic, strict: true))
        return variants
    }

    // MARK: .npy headers crafted by hand

    static func npy(header dict: String, payload: Data, declaredHeaderLength: Int? = nil) -> Data {
        var text = dict
        // Pad so magic(6)+version(2)+len(2)+header is a multiple of 64, ending in "\n".
        while (10 + text.utf8.count + 1) % 64 != 0 { text += " " }
        text += "\n"
        var data = Data([0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, 1, 0])
        let length = UInt16(truncatingIfNeeded: declaredHeaderLength ?? text.utf8.count)
        data.append(UInt8(length & 0xFF)); data.append(UInt8(length >> 8))
        data.append(Data(text.utf8))
        data.append(payload)
        return data
    }

    static func craftedNPY() -> [HostileVariant] {
        let payload = Data(count: 64)
        func v(_ name: String, _ shape: String, descr: String = "<f4", headerLength: Int? = nil) -> HostileVariant {
            HostileVariant(name: name, bytes: npy(header: "{'descr': '\(descr)', 'fortran_order': False, 'shape': \(shape), }",
                                                  payload: payload, declaredHeaderLength: headerLength), strict: true)
        }
        return [
            v("npy-size-beyond-file", "(1000, 1000)"),
            v("npy-dims-overflow", "(4611686018427387904, 4611686018427387904)"),
            v("npy-dims-overflow-3", "(3037000500, 3037000500, 2)"),
            v("npy-dim-huge", "(99999999999999999999999999,)"),
            v("npy-dim-negative", "(-1, 16)"),
            v("npy-dim-negative-pair", "(-4, -4)"),
            v("npy-header-length-beyond-file", "(4, 4)", headerLength: 65535),
            v("npy-header-length-zero", "(4, 4)", headerLength: 0),
            v("npy-bad-descr", "(4, 4)", descr: "<q99999999999"),
            v("npy-object-descr", "(4,)", descr: "|O"),
            v("npy-unterminated-shape", "(4, 4"),
            HostileVariant(name: "npy-header-garbage",
                           bytes: npy(header: String(repeating: "{(", count: 40), payload: payload), strict: true),
        ]
    }

    // MARK: .samw headers crafted by hand (docs/samw-format.md)

    struct SAMW {
        var header: [String: Any]
        var data: Data  // everything after the header
        var headerLength: Int

        init(_ file: Data) throws {
            let bytes = [UInt8](file)
            let h = Int(bytes[16..<24].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) })
            headerLength = h
            header = try JSONSerialization.jsonObject(with: Data(bytes[24..<24 + h])) as! [String: Any]
            data = Data(bytes[(24 + h)...])
        }

        /// Re-serialises with room to spare: every tensor offset moves by the (64-aligned) growth.
        func encoded(declaredHeaderLength: UInt64? = nil, edit: (inout [[String: Any]], Int) -> Void) throws -> Data {
            var newHeader = header
            var tensors = header["tensors"] as! [[String: Any]]
            let growth = 4096
            for index in tensors.indices {
                if let offset = tensors[index]["offset"] as? Int { tensors[index]["offset"] = offset + growth }
            }
            edit(&tensors, growth)
            newHeader["tensors"] = tensors
            var json = try JSONSerialization.data(withJSONObject: newHeader)
            let h = headerLength + growth
            precondition(json.count <= h, "crafted .samw header does not fit")
            json.append(Data(repeating: 0x20, count: h - json.count))
            var out = Data([0x53, 0x41, 0x4D, 0x57, 0x0D, 0x0A, 0x1A, 0x0A, 1, 0, 0, 0, 0, 0, 0, 0])
            var length = (declaredHeaderLength ?? UInt64(h)).littleEndian
            withUnsafeBytes(of: &length) { out.append(contentsOf: $0) }
            out.append(json)
            out.append(data)
            return out
        }
    }

    static func craftedSAMW(from good: Data) throws -> [HostileVariant] {
        let file = try SAMW(good)
        let size = good.count + 4096
        var variants: [HostileVariant] = []
        func add(_ name: String, declared: UInt64? = nil, strict: Bool = true, _ edit: @escaping (inout [[String: Any]]) -> Void) throws {
            variants.append(HostileVariant(name: name, bytes: try file.encoded(declaredHeaderLength: declared) { t, _ in edit(&t) },
                                           strict: strict))
        }
        let last = (file.header["tensors"] as! [[String: Any]]).count - 1
        try add("samw-offset-beyond-file") { $0[0]["offset"] = (size + 64) / 64 * 64 }
        try add("samw-length-beyond-file") { t in
            t[last]["length"] = (t[last]["length"] as! Int) + 1 << 20
            t[last]["shape"] = [(t[last]["length"] as! Int) / 4]
        }
        try add("samw-offset-plus-length-overflows") { t in
            t[0]["offset"] = Int.max - 63 ; t[0]["length"] = 128; t[0]["shape"] = [32]
        }
        try add("samw-dims-overflow") { t in
            t[0]["shape"] = [4_611_686_018_427_387_904, 4_611_686_018_427_387_904]
        }
        try add("samw-dims-overflow-wrapping-to-length") { t in
            // 2^62 * 4 elements of f32 wrap to 0 bytes in 64-bit arithmetic; product * 4 * count...
            t[0]["shape"] = [4_611_686_018_427_387_904, 4]; t[0]["length"] = 0
        }
        try add("samw-dim-negative") { t in t[0]["shape"] = [-1, -(t[0]["length"] as! Int) / 4] }
        try add("samw-offset-negative") { t in t[0]["offset"] = -64 }
        try add("samw-offset-misaligned") { t in t[0]["offset"] = (t[0]["offset"] as! Int) + 1 }
        try add("samw-offset-inside-header") { t in t[0]["offset"] = 64 }
        try add("samw-unknown-dtype") { t in t[0]["dtype"] = "q128" }
        try add("samw-duplicate-name") { t in t[1]["name"] = t[0]["name"]! }
        try add("samw-shape-not-array") { t in t[0]["shape"] = "big" }
        try add("samw-crc-wrong", strict: false) { t in t[0]["crc32"] = ((t[0]["crc32"] as! Int) ^ 1) }
        try add("samw-header-length-beyond-file", declared: UInt64(size) * 2) { _ in }
        try add("samw-header-length-huge", declared: UInt64.max) { _ in }
        try add("samw-header-length-2^63", declared: 1 << 63) { _ in }
        try add("samw-header-length-zero", declared: 0) { _ in }
        try add("samw-no-tensors", strict: false) { t in t = [] }
        variants.append(HostileVariant(name: "samw-header-not-json", bytes: {
            var d = good; d.replaceSubrange(24..<28, with: Data("}}}}".utf8)); return d
        }(), strict: true))
        variants.append(HostileVariant(name: "samw-magic-only", bytes: good.prefix(8), strict: true))
        return variants
    }
}
