#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A whole file mapped read-only into memory. Tensors read from it borrow its pages
/// (see `TensorStorage(borrowing:owner:)`), so large weights are never copied by the reader.
package final class MappedFile: @unchecked Sendable {
    package let path: String
    package let bytes: UnsafeRawBufferPointer
    private let mapping: UnsafeMutableRawPointer?

    /// `tensor` names the tensor the caller wants from this file, for the error message.
    package init(path: String, tensor: String? = nil) throws(FormatError) {
        self.path = path
        // Looked at before the open too: opening a socket fails with a confusing "no such device".
        var named = stat()
        if stat(path, &named) == 0, let kind = OutputRule.kind(named.st_mode), (named.st_mode & S_IFMT) != S_IFDIR {
            throw FormatError(.unreadable, file: path, tensor: tensor, "not a regular file (\(kind))")
        }
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)  // O_NONBLOCK: a FIFO must not block the open; fstat refuses it below
        guard descriptor >= 0 else {
            throw FormatError(.unreadable, file: path, tensor: tensor, "cannot open: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw FormatError(.unreadable, file: path, tensor: tensor, "cannot stat: \(String(cString: strerror(errno)))")
        }
        if let kind = OutputRule.kind(status.st_mode) {
            throw FormatError(.unreadable, file: path, tensor: tensor, "not a regular file (\(kind))")
        }
        let size = Int(status.st_size)
        if size == 0 {  // mmap refuses empty files; an empty view is what callers need
            mapping = nil
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0)
        guard let address, address != MAP_FAILED else {
            throw FormatError(.unreadable, file: path, tensor: tensor, "cannot map \(size) bytes: \(String(cString: strerror(errno)))")
        }
        mapping = address
        bytes = UnsafeRawBufferPointer(start: address, count: size)
        // A SIGBUS here (the file truncated under the mapping) then ends a tool with a message naming it.
        FaultContainment.registerMapping(address, count: size, file: path)
    }

    package var count: Int { bytes.count }

    /// Bytes `offset ..< offset+length`, checked against the file size first.
    package func slice(offset: Int, length: Int, tensor: String? = nil) throws(FormatError) -> UnsafeRawBufferPointer {
        let (end, overflow) = offset.addingReportingOverflow(length)
        guard offset >= 0, length >= 0, !overflow, end <= count else {
            throw FormatError(.truncated, file: path, tensor: tensor,
                              "needs bytes \(offset)..<\(overflow ? Int.max : end) but the file has \(count)")
        }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
    }

    /// Gives back the pages of `range` (a part of `bytes`) that reading made resident: they count
    /// in the process's memory until then. Reading them again maps them again from the page cache.
    package func releasePages(of range: UnsafeRawBufferPointer) {
        guard let mapping, let start = range.baseAddress, range.count > 0 else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let first = max((start - UnsafeRawPointer(mapping)) / page * page, 0)
        let end = min(start - UnsafeRawPointer(mapping) + range.count, bytes.count)
        _ = madvise(mapping + first, end - first, MADV_DONTNEED)
    }

    deinit {
        if let mapping {
            FaultContainment.unregisterMapping(mapping)
            munmap(mapping, bytes.count)
        }
    }
}
