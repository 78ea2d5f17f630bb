#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The check a tool makes on each input path before any work: it names a regular file (links
/// followed). A FIFO, device, socket or directory is refused at once, never opened or waited on.
package enum RegularFile {
    /// Throws `.unreadable` naming `path`, what stands there instead, and `role` (`--image-pe`) when given.
    package static func require(_ path: String, role: String? = nil) throws(FormatError) {
        var status = stat()
        let given = role.map { ", given as \($0)" } ?? ""
        guard stat(path, &status) == 0 else {
            throw FormatError(.unreadable, file: path, "cannot open\(given): \(String(cString: strerror(errno)))")
        }
        if let kind = OutputRule.kind(status.st_mode) {
            throw FormatError(.unreadable, file: path, "not a regular file (\(kind))\(given)")
        }
    }
}
