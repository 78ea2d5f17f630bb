import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a small file (a configuration, a list of point grids, a CSV): opened without blocking (a
/// FIFO cannot stall the open), checked on the open descriptor to be a regular file of at most
/// `limit` bytes, then read whole. `what` names such a file in the size error.
package enum ConfigFile {
    package static func contents(of path: String, limit: Int,
                                what: String = "a configuration file") throws(ConfigError) -> Data {
        // Looked at before the open too: opening a socket fails with a confusing "no such device".
        var named = stat()
        if stat(path, &named) == 0, named.st_mode & S_IFMT != S_IFREG {
            throw ConfigError(file: path, message: "not a regular file (\(kind(named.st_mode)))")
        }
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ConfigError(file: path, message: "cannot open: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw ConfigError(file: path, message: "cannot stat: \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw ConfigError(file: path, message: "not a regular file (\(kind(status.st_mode)))")
        }
        guard status.st_size <= limit else {
            throw ConfigError(file: path, message: "\(status.st_size) bytes; \(what) is at most \(limit)")
        }
        var data = Data(count: Int(status.st_size))
        var filled = 0
        while filled < data.count {
            let count = data.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                throw ConfigError(file: path, message: count == 0 ? "ended while being read" : "cannot read: \(String(cString: strerror(errno)))")
            }
            filled += count
        }
        return data
    }

    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }
}
