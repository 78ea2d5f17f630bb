import SAMTensor

/// The fixed parts of a .samw file (see docs/samw-format.md).
package enum SAMWLayout {
    /// "SAMW" then 0x0D 0x0A 0x1A 0x0A (catches text-mode and truncating transfers, as PNG's does).
    package static let magic: [UInt8] = [0x53, 0x41, 0x4D, 0x57, 0x0D, 0x0A, 0x1A, 0x0A]
    /// Files without quantized weights are written as version 1, byte for byte as before; a file
    /// holding `q8`/`q4` rows is version 2, so a reader that knows only version 1 refuses it by
    /// its version instead of failing on an unknown dtype. This reader reads both.
    package static let plainVersion: UInt32 = 1
    package static let quantizedVersion: UInt32 = 2
    package static let newestVersion: UInt32 = quantizedVersion
    /// magic (8) + version (u32) + reserved (u32) + header length (u64).
    package static let preambleSize = 24
    /// Tensor data offsets are multiples of this (AVX-512 line; also fine for NEON and page mapping).
    package static let alignment = 64
    /// Refuse headers larger than this before allocating for them.
    package static let maximumHeaderBytes = 64 << 20

    package static func dtypeName(_ dtype: DType) -> String { dtype.shortName }
    static func dtype(named name: String) -> DType? { DType.allCases.first { $0.shortName == name } }
    static func scheme(named name: String) -> QuantizedWeight.Scheme? { QuantizedWeight.Scheme(rawValue: name) }
}

/// One row of the tensor table.
package struct SAMWEntry: Codable, Sendable, Equatable {
    package let name: String
    package let dtype: String
    package let shape: [Int]
    /// From the start of the file.
    package let offset: Int
    package let length: Int
    package let crc32: UInt32
}

/// The JSON header: free-form model metadata, then the tensor table.
struct SAMWHeader: Codable {
    var metadata: JSONValue
    var tensors: [SAMWEntry]
}

extension SAMWHeader {
    /// The header from its parsed JSON, member by member as its Codable form names them (members
    /// it does not name are ignored, as JSONDecoder ignores them). Throws a sentence naming the
    /// row and member that is missing or of the wrong kind.
    init(json: JSONValue) throws(SAMWHeaderError) {
        guard case .object(let root) = json else { throw SAMWHeaderError("the header is not a JSON object") }
        guard let metadata = root["metadata"] else { throw SAMWHeaderError("no \"metadata\" member") }
        guard case .array(let rows)? = root["tensors"] else { throw SAMWHeaderError("no \"tensors\" array") }
        self.metadata = metadata
        tensors = try rows.enumerated().map { (index, row) throws(SAMWHeaderError) in
            guard case .object(let fields) = row else { throw SAMWHeaderError("tensor row \(index) is not an object") }
            func string(_ key: String) throws(SAMWHeaderError) -> String {
                guard case .string(let value)? = fields[key] else { throw SAMWHeaderError("tensor row \(index): \"\(key)\" is not a string") }
                return value
            }
            func integer(_ value: JSONValue?, _ key: String, in range: ClosedRange<Double>) throws(SAMWHeaderError) -> Int {
                // Doubles hold integers exactly up to 2^53; no file or shape comes near that.
                guard case .number(let number)? = value, number.rounded(.towardZero) == number, range.contains(number) else {
                    throw SAMWHeaderError("tensor row \(index): \"\(key)\" is not an integer in \(Int(range.lowerBound))...\(Int(range.upperBound))")
                }
                return Int(number)
            }
            let exactIntegers: ClosedRange<Double> = 0...9_007_199_254_740_992
            guard case .array(let dimensions)? = fields["shape"] else { throw SAMWHeaderError("tensor row \(index): \"shape\" is not an array") }
            return SAMWEntry(name: try string("name"), dtype: try string("dtype"),
                             shape: try dimensions.map { (d) throws(SAMWHeaderError) in try integer(d, "shape", in: exactIntegers) },
                             offset: try integer(fields["offset"], "offset", in: exactIntegers),
                             length: try integer(fields["length"], "length", in: exactIntegers),
                             crc32: UInt32(try integer(fields["crc32"], "crc32", in: 0...Double(UInt32.max))))
        }
    }
}

/// Why a header's JSON is not a .samw table.
struct SAMWHeaderError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
