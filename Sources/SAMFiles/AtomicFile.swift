#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file written through a temporary sibling renamed into place, so a reader never sees a
/// half-written output, whatever happens part-way; written as a stream, so its size never has
/// to fit in memory at once.
///
/// What may stand at the output's name is `OutputRule`'s: checked when the writer is made and again
/// just before the rename, so a directory, device, FIFO or link there, or one of the run's inputs, is
/// refused and left as it was. With `OutputPolicy.Existing.keep` the rename never replaces a file that
/// appeared meanwhile (`renameat2(RENAME_NOREPLACE)`, or link and unlink).
///
/// The temporary, `<name>.tmp-<pid>-<random>` in the output's folder, is created exclusively
/// (`O_CREAT | O_EXCL | O_NOFOLLOW`): a file or a link planted under that name cannot redirect
/// the write. Dropped without `commit()`, the writer removes its temporary; so do SIGINT and SIGTERM
/// in a tool that opted in (`FaultContainment.removeTemporariesOnInterrupt`). Temporaries of the same
/// output left by processes that no longer run (killed) are removed when the next writer starts.
package final class AtomicFileWriter {
    package let path: String
    package let policy: OutputPolicy
    private let temporary: String
    private var descriptor: Int32

    package convenience init(path: String, policy: OutputPolicy = .replace) throws(FormatError) {
        try self.init(path: path, policy: policy, temporaryNames: { OutputRule.temporaryName(for: path) })
    }

    /// `temporaryNames` gives each candidate name in turn (tests plant files under the names it gives).
    init(path: String, policy: OutputPolicy, temporaryNames: () -> String) throws(FormatError) {
        self.path = path
        self.policy = policy
        try OutputRule.check(path, policy)
        OutputRule.removeStaleTemporaries(of: path)
        var attempt = 0
        while true {
            let candidate = temporaryNames()
            // Created and registered as one step: an interrupt between the two would leave the file.
            let (descriptor, openError) = FaultContainment.deferringInterrupts {
                let descriptor = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
                let openError = errno
                if descriptor >= 0 { FaultContainment.registerTemporary(candidate) }
                return (descriptor, openError)
            }
            if descriptor >= 0 {
                self.temporary = candidate
                self.descriptor = descriptor
                return
            }
            attempt += 1
            guard openError == EEXIST, attempt < 8 else {
                throw FormatError(.writeFailed, file: path, "cannot create \(candidate): \(String(cString: strerror(openError)))")
            }
        }
    }

    /// Appends `buffer`.
    package func write(_ buffer: UnsafeRawBufferPointer) throws(FormatError) {
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

    package func write(_ bytes: [UInt8]) throws(FormatError) {
        var failure: FormatError?
        bytes.withUnsafeBytes { buffer in
            do throws(FormatError) { try write(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Appends `count` zero bytes.
    package func writeZeros(_ count: Int) throws(FormatError) {
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
    package func commit() throws(FormatError) {
        guard fsync(descriptor) == 0 else {
            throw FormatError(.writeFailed, file: path, "cannot flush \(temporary): \(String(cString: strerror(errno)))")
        }
        let closed = close(descriptor)
        descriptor = -1
        guard closed == 0 else {
            throw FormatError(.writeFailed, file: path, "cannot close \(temporary): \(String(cString: strerror(errno)))")
        }
        // The name is checked again: something may have appeared there while the file was written.
        try OutputRule.check(path, policy)
        let renamed = policy.existing == .keep ? OutputRule.renameNoReplace(temporary, path) : rename(temporary, path) == 0
        guard renamed else {
            if errno == EEXIST {
                throw FormatError(.outputRefused, file: path, "\(path) appeared while it was being written; it was kept (pass --force to replace it)")
            }
            throw FormatError(.writeFailed, file: path, "cannot rename into place: \(String(cString: strerror(errno)))")
        }
        committed = true
        FaultContainment.unregisterTemporary(temporary)
    }

    private var committed = false

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if !committed {
            unlink(temporary)
            FaultContainment.unregisterTemporary(temporary)
        }
    }
}

/// Whole files written through `AtomicFileWriter`.
package enum AtomicFile {
    package static func write(_ bytes: [UInt8], to path: String, policy: OutputPolicy = .replace) throws(FormatError) {
        let writer = try AtomicFileWriter(path: path, policy: policy)
        try writer.write(bytes)
        try writer.commit()
    }

    package static func write(_ buffer: UnsafeRawBufferPointer, to path: String, policy: OutputPolicy = .replace) throws(FormatError) {
        let writer = try AtomicFileWriter(path: path, policy: policy)
        try writer.write(buffer)
        try writer.commit()
    }
}

@inline(__always)
private func systemWrite(_ descriptor: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, pointer, count)
}
