#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes whole files through a temporary sibling renamed into place, so a reader never sees
/// a half-written output, whatever happens part-way.
public enum AtomicFile {
    public static func write(_ bytes: [UInt8], to path: String) throws(FormatError) {
        var failure: FormatError?
        bytes.withUnsafeBytes { buffer in
            do throws(FormatError) { try write(buffer, to: path) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    public static func write(_ buffer: UnsafeRawBufferPointer, to path: String) throws(FormatError) {
        let temporary = path + ".tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else {
            throw FormatError(.writeFailed, file: path, "cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
        var written = 0
        while written < buffer.count {
            let result = Glibc_write(descriptor, buffer.baseAddress! + written, buffer.count - written)
            if result < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                close(descriptor); unlink(temporary)
                throw FormatError(.writeFailed, file: path, "write failed: \(reason)")
            }
            written += result
        }
        guard fsync(descriptor) == 0, close(descriptor) == 0 else {
            unlink(temporary)
            throw FormatError(.writeFailed, file: path, "cannot flush \(temporary)")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw FormatError(.writeFailed, file: path, "cannot rename into place: \(reason)")
        }
    }
}

@inline(__always)
private func Glibc_write(_ descriptor: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, pointer, count)
}
