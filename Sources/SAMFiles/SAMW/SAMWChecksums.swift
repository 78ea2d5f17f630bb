import CZlib
import SAMParallel

/// CRC-32 of many buffers on every core: each buffer is cut into pieces of `pieceBytes`, the pieces
/// are checksummed in parallel and joined per buffer with zlib's `crc32_combine`, so one large
/// tensor uses every core too.
enum SAMWChecksums {
    static let pieceBytes = 8 << 20

    static func compute(_ buffers: [UnsafeRawBufferPointer]) -> [UInt32] {
        var pieces: [(buffer: Int, range: Range<Int>)] = []
        for (index, buffer) in buffers.enumerated() {
            var start = 0
            repeat {
                let end = min(buffer.count, start + pieceBytes)
                pieces.append((index, start..<end))
                start = end
            } while start < buffer.count
        }
        let pieceChecksums = [UInt32](unsafeUninitializedCapacity: pieces.count) { output, initialized in
            let out = output.baseAddress!
            Workers.forEach(pieces.count) { index in
                let (buffer, range) = pieces[index]
                out[index] = CRC32.checksum(UnsafeRawBufferPointer(rebasing: buffers[buffer][range]))
            }
            initialized = pieces.count
        }
        var result = [UInt32](repeating: 0, count: buffers.count)
        var started = [Bool](repeating: false, count: buffers.count)
        for ((buffer, range), crc) in zip(pieces, pieceChecksums) {
            if started[buffer] {
                result[buffer] = UInt32(truncatingIfNeeded: crc32_combine(UInt(result[buffer]), UInt(crc), off_t(range.count)))
            } else {
                result[buffer] = crc
                started[buffer] = true
            }
        }
        return result
    }
}
