import FuzzSupport
import SAMFormats

/// libFuzzer entry: the bytes as a .npy file, read as the CLIs read it; any throw is fine, a trap is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let path = TempInput.write(data, size, suffix: ".npy")
    if let tensor = try? NPY.read(path) { _ = tensor.storage.bytes.reduce(0, &+) }
    return 0
}

@_cdecl("FuzzNPY_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
