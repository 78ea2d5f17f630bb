import FuzzSupport
import SAMFormats
import SAMImport

/// libFuzzer entry: the bytes as a .onnx file, read as the CLIs read it, then imported as samconvert
/// imports it (naming rules, structural matching of anonymous graphs); any throw is fine, a trap is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let path = TempInput.write(data, size, suffix: ".onnx")
    guard let model = try? ONNXModel(path: path) else { return 0 }
    for initializer in model.storedTensors { _ = try? model.tensor(named: initializer.name) }
    _ = try? ONNXImport.importModel(path)
    return 0
}

@_cdecl("FuzzONNX_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
