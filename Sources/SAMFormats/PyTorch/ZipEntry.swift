/// One member of a zip archive, located in the file and checked against its size.
struct ZipEntry: Sendable {
    enum Method: UInt16, Sendable {
        case stored = 0
        case deflated = 8
    }

    let name: String
    let method: Method
    let crc32: UInt32
    /// Bytes in the file (equal to `size` when stored).
    let compressedSize: Int
    /// Bytes once inflated.
    let size: Int
    /// Where the entry's (compressed) bytes start in the file, past its local header.
    let dataOffset: Int
}
