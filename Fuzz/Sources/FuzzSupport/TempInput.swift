#if canImport(Glibc)
import Glibc
#endif

/// The readers take paths, so each input is written to one per-process temporary file first.
public enum TempInput {
    nonisolated(unsafe) static var paths: [String: String] = [:]

    public static func write(_ data: UnsafePointer<UInt8>?, _ size: Int, suffix: String) -> String {
        let path = paths[suffix] ?? "/tmp/samfuzz-\(getpid())\(suffix)"
        paths[suffix] = path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        precondition(descriptor >= 0, "cannot create \(path)")
        var written = 0
        while let data, written < size {
            let result = Glibc.write(descriptor, data + written, size - written)
            precondition(result > 0, "cannot write \(path)")
            written += result
        }
        close(descriptor)
        return path
    }
}

public typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: FuzzCallback) -> CInt

/// SwiftPM links an executable target with `main` aliased to `<Module>_main`, which replaces libFuzzer's own
/// main(); each target therefore defines `<Module>_main` and hands over to libFuzzer's driver here.
public func runFuzzer(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                      _ callback: FuzzCallback) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, callback)
}
