import Foundation
import SAMFormats
import SAMTensor
import Testing

/// Every bad file gives a `FormatError` with the expected code, naming the file (and the tensor where one is involved).
@Suite("Bad inputs")
struct BadInputTests {
    // MARK: - .npy

    @Test("npy: a file cut 5 bytes short of its data is truncated")
    func npyTruncated() {
        let path = Fixtures.path("npy_truncated_f32.npy")
        expectFormatError(.truncated, file: path) { _ = try NPY.read(path) }
    }

    @Test("npy: bytes after the data are a sizeMismatch")
    func npyTrailing() {
        let path = Fixtures.path("npy_trailing_f32.npy")
        expectFormatError(.sizeMismatch, file: path) { _ = try NPY.read(path) }
    }

    @Test("npy: a bad magic is corrupt")
    func npyBadMagic() {
        let path = Fixtures.path("npy_bad_magic.npy")
        expectFormatError(.corrupt, file: path) { _ = try NPY.read(path) }
    }

    @Test("npy: Fortran order, big-endian and int16 are unsupported",
          arguments: ["npy_fortran_f32.npy", "npy_bigendian_f32.npy", "npy_i16.npy"])
    func npyUnsupported(name: String) {
        let path = Fixtures.path(name)
        expectFormatError(.unsupported, file: path) { _ = try NPY.read(path) }
    }

    @Test("npy: a missing file and a folder are unreadable")
    func npyUnreadable() {
        let missing = Fixtures.path("no_such.npy")
        expectFormatError(.unreadable, file: missing) { _ = try NPY.read(missing) }
        expectFormatError(.unreadable, file: Fixtures.folder) { _ = try NPY.read(Fixtures.folder) }
    }

    @Test("npy: other formats given as .npy are corrupt", arguments: ["tiny.onnx", "hdf5_flat.h5", "blob_f32_1x4x3x3.bin"])
    func npyOtherFormats(name: String) {
        let path = Fixtures.path(name)
        expectFormatError(.corrupt, file: path) { _ = try NPY.read(path) }
    }

    // MARK: - HDF5

    @Test("hdf5: a file cut in the middle of a dataset's data is truncated")
    func hdf5Truncated() {
        let path = Fixtures.path("hdf5_truncated.h5")
        // The reader may fail at open or when reading the cut dataset; either way the code is `truncated`.
        expectFormatError(.truncated, file: path, tensor: nil) {
            let file = try HDF5File(path: path)
            _ = try file.readAll()
        }
    }

    @Test("hdf5: random bytes and other formats are corrupt", arguments: ["hdf5_random.h5", "tiny.onnx", "npy_f32.npy"])
    func hdf5Corrupt(name: String) {
        let path = Fixtures.path(name)
        expectFormatError(.corrupt, file: path) { _ = try HDF5File(path: path) }
    }

    @Test("hdf5: a missing file is unreadable")
    func hdf5Missing() {
        let path = Fixtures.path("no_such.h5")
        expectFormatError(.unreadable, file: path) { _ = try HDF5File(path: path) }
    }

    // MARK: - ONNX

    /// protobuf cannot tell a cut message from a damaged one, so a truncated model is `corrupt`.
    @Test("onnx: truncated files (40 bytes, half) and random bytes are corrupt",
          arguments: ["truncated_40.onnx", "truncated_half.onnx", "random.onnx", "hdf5_flat.h5"])
    func onnxCorrupt(name: String) {
        let path = Fixtures.path(name)
        expectFormatError(.corrupt, file: path) { _ = try ONNXModel(path: path) }
    }

    @Test("onnx: an empty file is corrupt, a missing one unreadable")
    func onnxEmptyAndMissing() throws {
        let folder = try temporaryFolder("onnx-empty")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let empty = folder + "/empty.onnx"
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        expectFormatError(.corrupt, file: empty) { _ = try ONNXModel(path: empty) }
        let missing = Fixtures.path("no_such.onnx")
        expectFormatError(.unreadable, file: missing) { _ = try ONNXModel(path: missing) }
    }

    @Test("onnx: external data running past the end of its file is truncated, naming the data file and tensor")
    func externalPastEnd() throws {
        let path = Fixtures.path("ext_past_end.onnx")
        let model = try ONNXModel(path: path)  // the listing does not touch the data
        #expect(model.graph.initializers.first?.location == .external(location: "ext_past_end.onnx.data", offset: 64, length: 64))
        expectFormatError(.truncated, fileSuffix: "/ext_past_end.onnx.data", tensor: "ext.weight") {
            _ = try model.tensor(named: "ext.weight")
        }
        expectFormatError(.truncated, fileSuffix: "/ext_past_end.onnx.data", tensor: "ext.index") {
            _ = try model.tensor(named: "ext.index")
        }
        expectFormula(try model.tensor(named: "inline.bias"), .float32, [4])
    }

    @Test("onnx: an absolute external location is unsafePath (the model's other tensors still read)")
    func externalAbsolute() throws {
        let path = Fixtures.path("ext_absolute.onnx")
        let model = try ONNXModel(path: path)
        expectFormatError(.unsafePath, file: path, tensor: "ext.weight") { _ = try model.tensor(named: "ext.weight") }
        expectFormula(try model.tensor(named: "ext.index"), .int64, [3])
    }

    @Test("onnx: a location with '..' is unsafePath even when the file it names exists")
    func externalDotDot() throws {
        let path = Fixtures.path("ext_dotdot.onnx")
        #expect(FileManager.default.fileExists(atPath: Fixtures.folder + "/../Fixtures/external.onnx.data"))
        let model = try ONNXModel(path: path)
        expectFormatError(.unsafePath, file: path, tensor: "ext.weight") { _ = try model.tensor(named: "ext.weight") }
    }

    @Test("onnx: a missing external data file is unreadable, naming that file and the tensor")
    func externalMissing() throws {
        let path = Fixtures.path("ext_missing.onnx")
        let model = try ONNXModel(path: path)
        expectFormatError(.unreadable, fileSuffix: "/ext_missing.onnx.data", tensor: "ext.weight") {
            _ = try model.tensor(named: "ext.weight")
        }
    }

    @Test("onnx: a data file that is a symlink leading outside the model's folder is unsafePath")
    func externalSymlinkEscape() throws {
        let folder = try temporaryFolder("onnx-link")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = folder + "/external.onnx"
        try FileManager.default.copyItem(atPath: Fixtures.path("external.onnx"), toPath: model)
        try FileManager.default.createSymbolicLink(atPath: folder + "/external.onnx.data",
                                                   withDestinationPath: Fixtures.path("external.onnx.data"))
        let loaded = try ONNXModel(path: model)
        expectFormatError(.unsafePath, file: model, tensor: "ext.weight") { _ = try loaded.tensor(named: "ext.weight") }
        expectFormula(try loaded.tensor(named: "inline.bias"), .float32, [4])
    }

    @Test("onnx: initializers whose data disagrees with their shape are sizeMismatch, an INT16 one unsupported")
    func badTensors() throws {
        let path = Fixtures.path("bad_tensors.onnx")
        let model = try ONNXModel(path: path)  // the listing does not read the data
        #expect(model.graph.initializers.map(\.name) == ["short.raw", "short.typed", "ext.wrong_length", "int16.raw", "good.f32"])
        #expect(model.graph.initializers[3].elementType.name == "INT16")
        #expect(model.graph.initializers[3].elementType.dtype == nil)
        for name in ["short.raw", "short.typed", "ext.wrong_length"] {
            expectFormatError(.sizeMismatch, file: path, tensor: name) { _ = try model.tensor(named: name) }
        }
        expectFormatError(.unsupported, file: path, tensor: "int16.raw") { _ = try model.tensor(named: "int16.raw") }
        expectFormula(try model.tensor(named: "good.f32"), .float32, [2])
    }

    @Test("onnx: a copied model with its data file beside it reads from the new folder")
    func externalCopied() throws {
        let folder = try temporaryFolder("onnx-copy")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in ["external.onnx", "external.onnx.data"] {
            try FileManager.default.copyItem(atPath: Fixtures.path(name), toPath: folder + "/" + name)
        }
        let model = try ONNXModel(path: folder + "/external.onnx")
        expectFormula(try model.tensor(named: "ext.weight"), .float32, [4, 4])
        expectFormula(try model.tensor(named: "ext.index"), .int64, [3])
    }
}
