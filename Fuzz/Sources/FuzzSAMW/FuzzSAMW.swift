import FuzzSupport
import SAMFiles

/// libFuzzer entry: the bytes as a .samw file, read as the CLIs read it; any throw is fine, a trap is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let path = TempInput.write(data, size, suffix: ".samw")
    guard let file = try? SAMWFile(path: path) else { return 0 }
    _ = try? file.verifyChecksums()
    for name in file.names { _ = try? file.tensor(named: name) }
    return 0
}

@_cdecl("FuzzSAMW_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
