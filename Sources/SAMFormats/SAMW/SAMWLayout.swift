import SAMTensor

/// The fixed parts of a .samw file (see docs/samw-format.md).
public enum SAMWLayout {
    /// "SAMW" then 0x0D 0x0A 0x1A 0x0A (catches text-mode and truncating transfers, as PNG's does).
    public static let magic: [UInt8] = [0x53, 0x41, 0x4D, 0x57, 0x0D, 0x0A, 0x1A, 0x0A]
    public static let version: UInt32 = 1
    /// magic (8) + version (u32) + reserved (u32) + header length (u64).
    public static let preambleSize = 24
    /// Tensor data offsets are multiples of this (AVX-512 line; also fine for NEON and page mapping).
    public static let alignment = 64
    /// Refuse headers larger than this before allocating for them.
    public static let maximumHeaderBytes = 64 << 20

    static func dtypeName(_ dtype: DType) -> String { dtype.shortName }
    static func dtype(named name: String) -> DType? { DType.allCases.first { $0.shortName == name } }
}

/// One row of the tensor table.
public struct SAMWEntry: Codable, Sendable, Equatable {
    public let name: String
    public let dtype: String
    public let shape: [Int]
    /// From the start of the file.
    public let offset: Int
    public let length: Int
    public let crc32: UInt32
}

/// The JSON header: free-form model metadata, then the tensor table.
struct SAMWHeader: Codable {
    var metadata: JSONValue
    var tensors: [SAMWEntry]
}
