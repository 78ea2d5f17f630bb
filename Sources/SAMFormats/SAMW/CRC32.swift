import CZlib

/// CRC-32 (IEEE 802.3), zlib's crc32(), so `python -c "import zlib; print(zlib.crc32(data))"`
/// checks a .samw tensor independently.
public enum CRC32 {
    /// The checksum of `bytes`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        update(0, bytes)
    }

    /// `crc` (of earlier bytes; 0 to start) extended over `bytes`.
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = UInt(crc)
        var offset = 0
        // zlib takes a 32-bit length per call.
        while offset < bytes.count {
            let length = min(bytes.count - offset, 1 << 30)
            crc = crc32(crc, bytes.baseAddress!.advanced(by: offset).assumingMemoryBound(to: Bytef.self), uInt(length))
            offset += length
        }
        return UInt32(truncatingIfNeeded: crc)
    }
}
