#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSHA256

/// SHA-256 (FIPS 180-4), for provenance: a .samw records the digest of every file it was made from,
/// comparable with `sha256sum` and the manifests exporters write. Computed by CSHA256 (the CPU's SHA
/// instructions where it has them), so reading a model needs no crypto library.
package enum SHA256 {
    /// Thrown by `hex(_:shouldStop:)` when asked to stop part-way.
    package struct Stopped: Error {}

    /// The digest of `bytes` as 64 lowercase hex digits.
    package static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        // A closure that never stops: no error can come out.
        (try? hex(bytes, shouldStop: { false })) ?? ""
    }

    /// The digest by the plain C rounds even on a CPU with SHA instructions (tests compare the two).
    package static func hexByPortableRounds(_ bytes: UnsafeRawBufferPointer) -> String {
        (try? hex(bytes, portableRounds: true, shouldStop: { false })) ?? ""
    }

    /// The digest of `bytes`, in 16 MB steps that each first ask `shouldStop`, so a hash of a large
    /// file on another thread can be abandoned quickly.
    package static func hex(_ bytes: UnsafeRawBufferPointer, shouldStop: () -> Bool) throws(Stopped) -> String {
        try hex(bytes, portableRounds: false, shouldStop: shouldStop)
    }

    static func hex(_ bytes: UnsafeRawBufferPointer, portableRounds: Bool, shouldStop: () -> Bool) throws(Stopped) -> String {
        var context = sam_sha256()
        sam_sha256_init(&context, portableRounds ? 1 : 0)
        var offset = 0
        repeat {
            if shouldStop() { throw Stopped() }
            let length = min(bytes.count - offset, 16 << 20)
            if let base = bytes.baseAddress { sam_sha256_update(&context, base + offset, length) }
            offset += length
        } while offset < bytes.count
        return finish(&context)
    }

    /// The digest of a whole file (read in steps, never held whole).
    package static func hex(ofFile path: String) throws(FormatError) -> String {
        try digest(ofFile: path, shouldStop: { false })!.hex
    }

    /// The digest and size of a regular file, read 16 MB at a time into one buffer (`shouldStop`
    /// asked before each step; nil when it said stop). Reading, not mapping: a multi-GB input's
    /// pages stay in the page cache instead of in this process's resident memory.
    package static func digest(ofFile path: String, shouldStop: () -> Bool) throws(FormatError) -> (hex: String, bytes: Int)? {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw FormatError(.unreadable, file: path, "cannot open: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw FormatError(.unreadable, file: path, "cannot stat: \(String(cString: strerror(errno)))")
        }
        if let kind = OutputRule.kind(status.st_mode) { throw FormatError(.unreadable, file: path, "not a regular file (\(kind))") }
        var context = sam_sha256()
        sam_sha256_init(&context, 0)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 16 << 20, alignment: 64)
        defer { buffer.deallocate() }
        var total = 0
        while true {
            if shouldStop() { return nil }
            let count = read(descriptor, buffer, 16 << 20)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw FormatError(.unreadable, file: path, "cannot read: \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            sam_sha256_update(&context, buffer, count)
            total += count
        }
        return (finish(&context), total)
    }

    private static func finish(_ context: inout sam_sha256) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        digest.withUnsafeMutableBufferPointer { sam_sha256_final(&context, $0.baseAddress) }
        let digits = Array("0123456789abcdef")
        return String(digest.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }
}
