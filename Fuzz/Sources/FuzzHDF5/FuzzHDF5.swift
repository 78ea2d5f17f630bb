import FuzzSupport
import SAMFiles
import SAMFormats

/// libFuzzer entry: the bytes as a .h5 file, read as the CLIs read it; any throw is fine, a trap is a finding.
/// A fault inside libhdf5 itself is contained as the CLIs contain it (they exit 2 naming the file): the
/// input is then dropped from the corpus (-1) so the fuzzer does not keep mutating libhdf5's own bugs.
/// A fault anywhere else, our code included, still reaches ASan.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let path = TempInput.write(data, size, suffix: ".h5")
    let signal = FaultContainment.recovering {
        guard let file = try? HDF5File(path: path) else { return }
        _ = try? file.readAll()
    }
    return signal == 0 ? 0 : -1
}

@_cdecl("FuzzHDF5_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
