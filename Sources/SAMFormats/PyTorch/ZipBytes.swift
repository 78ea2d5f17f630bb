import SAMFiles
/// Little-endian fields of a mapped file, each read only after its bounds are checked.
struct ZipBytes {
    let bytes: UnsafeRawBufferPointer
    let path: String

    func check(_ offset: Int, _ length: Int, _ what: @autoclosure () -> String) throws(FormatError) {
        let (end, overflow) = offset.addingReportingOverflow(length)
        guard offset >= 0, length >= 0, !overflow, end <= bytes.count else {
            throw FormatError(.truncated, file: path, "\(what()) needs bytes \(offset)..<\(overflow ? Int.max : end), the file has \(bytes.count)")
        }
    }

    func uint16(_ offset: Int, _ what: @autoclosure () -> String) throws(FormatError) -> UInt16 {
        try check(offset, 2, what())
        return bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self).littleEndian
    }

    func uint32(_ offset: Int, _ what: @autoclosure () -> String) throws(FormatError) -> UInt32 {
        try check(offset, 4, what())
        return bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian
    }

    /// A 64-bit field, refused when it does not fit an Int (no file is that large).
    func int64(_ offset: Int, _ what: @autoclosure () -> String) throws(FormatError) -> Int {
        try check(offset, 8, what())
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
        guard value <= UInt64(Int.max) else { throw FormatError(.corrupt, file: path, "\(what()) is \(value)") }
        return Int(value)
    }

    func text(_ offset: Int, _ length: Int, _ what: @autoclosure () -> String) throws(FormatError) -> String {
        try check(offset, length, what())
        return String(decoding: bytes[offset..<offset + length], as: UTF8.self)
    }
}
