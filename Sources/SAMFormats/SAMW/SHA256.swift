import CLibCrypto

/// SHA-256 (FIPS 180-4) from OpenSSL's libcrypto, for provenance: a .samw records the digest of
/// every file it was made from, comparable with `sha256sum` and the manifests exporters write.
public enum SHA256 {
    /// Thrown by `hex(_:shouldStop:)` when asked to stop part-way.
    public struct Stopped: Error {}

    /// The digest of `bytes` as 64 lowercase hex digits.
    public static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        // A closure that never stops: no error can come out.
        (try? hex(bytes, shouldStop: { false })) ?? ""
    }

    /// The digest of `bytes`, in 16 MB steps that each first ask `shouldStop`, so a hash of a large
    /// file on another thread can be abandoned quickly.
    public static func hex(_ bytes: UnsafeRawBufferPointer, shouldStop: () -> Bool) throws(Stopped) -> String {
        // EVP calls fail only when OpenSSL cannot allocate; that is not an input error.
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("libcrypto: cannot allocate a digest context") }
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1, "libcrypto: SHA-256 unavailable")
        var offset = 0
        repeat {
            if shouldStop() { throw Stopped() }
            let length = min(bytes.count - offset, 16 << 20)
            precondition(EVP_DigestUpdate(context, bytes.baseAddress.map { $0 + offset }, length) == 1, "libcrypto: SHA-256 failed")
            offset += length
        } while offset < bytes.count
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let finished = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        precondition(finished == 1 && length == 32, "libcrypto: SHA-256 failed")
        let digits = Array("0123456789abcdef")
        return String(digest.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }

    /// The digest of a whole file (mapped, not read into memory).
    public static func hex(ofFile path: String) throws(FormatError) -> String {
        let file = try MappedFile(path: path)
        return hex(file.bytes)
    }
}
