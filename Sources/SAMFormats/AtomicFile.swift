#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file written through a temporary sibling renamed into place, so a reader never sees a
/// half-written output, whatever happens part-way; written as a stream, so its size never has
/// to fit in memory at once.
///
/// The temporary, `<name>.tmp-<pid>-<random>` in the output's folder, is created exclusively
/// (`O_CREAT | O_EXCL | O_NOFOLLOW`): a file or a link planted under that name cannot redirect
/// the write. Dropped without `commit()`, the writer removes its temporary.
public final class AtomicFileWriter {
    public let path: String
    private let temporary: String
    private var descriptor: Int32

    public init(path: String) throws(FormatError) {
        self.path = path
        var attempt = 0
        while true {
            let candidate = path + ".tmp-\(getpid())-" + String(UInt64.random(in: 1...UInt64.max), radix: 16)
            let descriptor = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if descriptor >= 0 {
                self.temporary = candidate
                self.descriptor = descriptor
                return
            }
            attempt += 1
            guard errno == EEXIST, attempt < 8 else {
                throw FormatError(.writeFailed, file: path, "cannot create \(candidate): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Appends `buffer`.
    public func write(_ buffer: UnsafeRawBufferPointer) throws(FormatError) {
        var written = 0
        while written < buffer.count {
            let result = systemWrite(descriptor, buffer.baseAddress! + written, buffer.count - written)
            if result < 0 {
                if errno == EINTR { continue }
                throw FormatError(.writeFailed, file: path, "write failed: \(String(cString: strerror(errno)))")
            }
            written += result
        }
    }

    public func write(_ bytes: [UInt8]) throws(FormatError) {
        var failure: FormatError?
        bytes.withUnsafeBytes { buffer in
            do throws(FormatError) { try write(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Appends `count` zero bytes.
    public func writeZeros(_ count: Int) throws(FormatError) {
        guard count > 0 else { return }
        let zeros = UnsafeMutableRawBufferPointer.allocate(byteCount: min(count, 1 << 16), alignment: 64)
        defer { zeros.deallocate() }
        zeros.initializeMemory(as: UInt8.self, repeating: 0)
        var left = count
        while left > 0 {
            let part = min(left, zeros.count)
            try write(UnsafeRawBufferPointer(rebasing: zeros[0..<part]))
            left -= part
        }
    }

    /// Flushes the file to disk and renames it into place.
    public func commit() throws(FormatError) {
        guard fsync(descriptor) == 0 else {
            throw FormatError(.writeFailed, file: path, "cannot flush \(temporary): \(String(cString: strerror(errno)))")
        }
        let closed = close(descriptor)
        descriptor = -1
        guard closed == 0 else {
            throw FormatError(.writeFailed, file: path, "cannot close \(temporary): \(String(cString: strerror(errno)))")
        }
        guard rename(temporary, path) == 0 else {
            throw FormatError(.writeFailed, file: path, "cannot rename into place: \(String(cString: strerror(errno)))")
        }
        committed = true
    }

    private var committed = false

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if !committed { unlink(temporary) }
    }
}

/// Whole files written through `AtomicFileWriter`.
public enum AtomicFile {
    public static func write(_ bytes: [UInt8], to path: String) throws(FormatError) {
        let writer = try AtomicFileWriter(path: path)
        try writer.write(bytes)
        try writer.commit()
    }

    public static func write(_ buffer: UnsafeRawBufferPointer, to path: String) throws(FormatError) {
        let writer = try AtomicFileWriter(path: path)
        try writer.write(buffer)
        try writer.commit()
    }
}

@inline(__always)
private func systemWrite(_ descriptor: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, pointer, count)
}
