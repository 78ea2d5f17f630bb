import FuzzSupport
import SAMFormats

/// libFuzzer entry: the bytes as a .pth file, read as the CLIs read it (the global inventory saminspect
/// prints, then the checkpoint and every tensor); any throw is fine, a trap is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let path = TempInput.write(data, size, suffix: ".pth")
    _ = try? PyTorchCheckpoint.globalInventory(path: path)
    guard let checkpoint = try? PyTorchCheckpoint(path: path) else { return 0 }
    _ = try? checkpoint.readAll()
    for key in checkpoint.keys { _ = try? checkpoint.tensor(named: key) }
    return 0
}

@_cdecl("FuzzPTH_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
