#if canImport(Glibc)
import Glibc
#endif

/// The readers take paths, so each input is written to one file per suffix first, in a directory of
/// the process's own: mkdtemp makes it (mode 0700, a fresh name, so nothing already in the temporary
/// folder is written through), and it is removed with its files when the process exits. A crash
/// leaves it behind; libFuzzer has saved the input as an artifact by then.
public enum TempInput {
    nonisolated(unsafe) static var directory: String?
    nonisolated(unsafe) static var paths: [String: String] = [:]

    public static func write(_ data: UnsafePointer<UInt8>?, _ size: Int, suffix: String) -> String {
        let path = paths[suffix] ?? "\(privateDirectory())/input\(suffix)"
        paths[suffix] = path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o600)
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

    private static func privateDirectory() -> String {
        if let directory { return directory }
        // Reproducible runs (scripts/fuzz.sh without --explore) name a fresh folder of their own: the
        // inputs' paths then read the same in every run, and so do the messages and hashes made of them.
        if let fixed = getenv("SAM_FUZZ_INPUT_DIR").map({ String(cString: $0) }), !fixed.isEmpty {
            directory = fixed
            atexit { TempInput.removeFiles() }
            return fixed
        }
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/samfuzz-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { preconditionFailure("cannot create a directory in \(base)") }
        let path = String(cString: made)
        directory = path
        atexit { TempInput.removeFiles() }
        return path
    }

    static func removeFiles() {
        for path in paths.values { unlink(path) }
        if let directory { rmdir(directory) }
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
