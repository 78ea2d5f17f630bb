import FuzzSupport
import SAMFormats

/// libFuzzer entry: the bytes as a .safetensors file, opened and every tensor read; any throw is fine,
/// a trap is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let path = TempInput.write(data, size, suffix: ".safetensors")
    guard let file = try? SafetensorsFile(path: path) else { return 0 }
    _ = try? file.readAll()
    return 0
}

@_cdecl("FuzzSafetensors_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
