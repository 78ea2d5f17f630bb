import CCRC32
import CZlib

/// CRC-32 (IEEE 802.3), zlib's crc32(), so `python -c "import zlib; print(zlib.crc32(data))"`
/// checks a .samw tensor independently. Where the CPU multiplies carry-less (PCLMULQDQ, every
/// x86-64 CPU since 2010), whole 64-byte blocks are folded first (`sam_crc32_fold`), several times
/// faster than zlib's tables; the same value either way.
package enum CRC32 {
    static let foldAvailable = sam_crc32_fold_available() != 0

    /// The checksum of `bytes`.
    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        update(0, bytes)
    }

    /// `crc` (of earlier bytes; 0 to start) extended over `bytes`.
    package static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        var crc = crc
        var offset = 0
        if foldAvailable, bytes.count >= 64 {
            offset = bytes.count & ~63
            var folded: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &folded) { out in
                // zlib's register starts at ~crc; R(~crc, blocks) == R(0, folded), and zlib's crc32
                // seeded with ~0 gives ~R(0, ...), which is zlib's answer for the blocks.
                sam_crc32_fold(~crc, base.assumingMemoryBound(to: UInt8.self), offset,
                               out.baseAddress!.assumingMemoryBound(to: UInt8.self))
                crc = tables(0xFFFF_FFFF, UnsafeRawBufferPointer(out))
            }
        }
        return tables(crc, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
    }

    /// zlib's table-driven crc32.
    static func tables(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
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
