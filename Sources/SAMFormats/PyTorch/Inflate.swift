import CZlib
import SAMFiles
import SAMTensor

/// Deflated zip entries inflated with zlib into owned memory of exactly the size the archive declares.
enum Inflate {
    /// Deflate never expands more than 1032:1, so a larger declared size is a lie, refused before allocating.
    static let maximumRatio = 1032

    static func entry(_ entry: ZipEntry, data: UnsafeRawBufferPointer, file: String) throws(FormatError) -> TensorStorage {
        let (bound, overflow) = data.count.multipliedReportingOverflow(by: maximumRatio)
        guard overflow || entry.size <= bound + 64 else {
            throw FormatError(.corrupt, file: file, "entry '\(entry.name)' declares \(entry.size) bytes from \(data.count) compressed, more than deflate can produce")
        }
        guard let storage = TensorStorage(zeroedByteCountIfAvailable: entry.size) else {
            throw FormatError(.outOfMemory, file: file, "cannot allocate \(entry.size) bytes to inflate entry '\(entry.name)'")
        }
        var stream = z_stream()
        // Negative window bits: a raw deflate stream, as zip stores it (no zlib header).
        guard inflateInit2_(&stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw FormatError(.unreadable, file: file, "zlib cannot start inflating entry '\(entry.name)'")
        }
        defer { inflateEnd(&stream) }
        // zlib counts in 32-bit lengths: feed and drain at most 1 GiB per call. Past the declared size it
        // gets one spare byte, so a stream that inflates to more than declared is caught, not written.
        let chunk = 1 << 30
        let input = UnsafeMutablePointer(mutating: data.baseAddress?.assumingMemoryBound(to: Bytef.self))
        let output = UnsafeMutableRawPointer(mutating: storage.bytes.baseAddress!).assumingMemoryBound(to: Bytef.self)
        let spare = UnsafeMutablePointer<Bytef>.allocate(capacity: 1)
        defer { spare.deallocate() }
        var status = Z_OK
        var inputGiven = 0, outputGiven = 0, spareGiven = false
        while status == Z_OK {
            if stream.avail_in == 0, inputGiven < data.count, let input {
                let length = min(chunk, data.count - inputGiven)
                stream.next_in = input + inputGiven
                stream.avail_in = uInt(length)
                inputGiven += length
            }
            if stream.avail_out == 0 {
                if outputGiven < entry.size {
                    let length = min(chunk, entry.size - outputGiven)
                    stream.next_out = output + outputGiven
                    stream.avail_out = uInt(length)
                    outputGiven += length
                } else if !spareGiven {
                    stream.next_out = spare
                    stream.avail_out = 1
                    spareGiven = true
                } else {
                    break
                }
            }
            status = inflate(&stream, Z_NO_FLUSH)
        }
        guard status == Z_STREAM_END, Int(stream.total_out) == entry.size else {
            let reason = Int(stream.total_out) > entry.size ? "inflates to more than the \(entry.size) bytes it declares"
                : status == Z_STREAM_END ? "inflates to \(stream.total_out) bytes, not the \(entry.size) it declares"
                : "is not a complete deflate stream (zlib status \(status))"
            throw FormatError(.corrupt, file: file, "entry '\(entry.name)' \(reason)")
        }
        guard CRC32.checksum(storage.bytes) == entry.crc32 else {
            throw FormatError(.corrupt, file: file, "entry '\(entry.name)' fails its CRC-32 check")
        }
        return storage
    }
}
