import Foundation
import SAMFormats
import SAMTensor
import Testing

@Suite("NPY reader and writer")
struct NPYTests {
    @Test("every dtype reads with its shape (2,3,4) and closed-form values", arguments: DType.allCases)
    func everyDType(dtype: DType) throws {
        let tensor = try NPY.read(Fixtures.path("npy_\(dtype.shortName).npy"))
        expectFormula(tensor, dtype, [2, 3, 4])
    }

    @Test("f32 and f16 widen to the exact Floats")
    func floatsAccessor() throws {
        let f32 = try NPY.read(Fixtures.path("npy_f32.npy"))
        #expect(f32.floats() == (0..<24).map { Float($0) * 0.25 - 1 })
        let f16 = try NPY.read(Fixtures.path("npy_f16.npy"))
        #expect(f16.floats() == (0..<24).map { Float($0) * 0.5 - 3 })
        let bool = try NPY.read(Fixtures.path("npy_bool.npy"))
        #expect(bool.int64s() == (0..<24).map { $0 % 3 == 0 ? 1 : 0 })
    }

    @Test("scalars have shape [] and one element")
    func scalars() throws {
        let f32 = try NPY.read(Fixtures.path("npy_scalar_f32.npy"))
        #expect(f32.dtype == .float32)
        #expect(f32.shape == [])
        #expect(f32.elementCount == 1)
        #expect(f32.value(at: 0) == 2.5)
        let i64 = try NPY.read(Fixtures.path("npy_scalar_i64.npy"))
        #expect(i64.dtype == .int64)
        #expect(i64.shape == [])
        #expect(i64.int64s() == [-7])
    }

    @Test("a zero-size array (0,3) reads as an empty tensor")
    func empty() throws {
        let tensor = try NPY.read(Fixtures.path("npy_empty_f32.npy"))
        #expect(tensor.dtype == .float32)
        #expect(tensor.shape == [0, 3])
        #expect(tensor.elementCount == 0)
        #expect(tensor.byteCount == 0)
        #expect(tensor.floats() == [])
    }

    @Test("a version 2.0 file reads like version 1")
    func version2() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("npy_v2_f32.npy")))
        #expect(bytes[6] == 2)  // the fixture really is version 2
        expectFormula(try NPY.read(Fixtures.path("npy_v2_f32.npy")), .float32, [3, 2])
    }

    static let roundTripFiles = DType.allCases.map { "npy_\($0.shortName).npy" }
        + ["npy_scalar_f32.npy", "npy_scalar_i64.npy", "npy_empty_f32.npy", "npy_v2_f32.npy"]

    @Test("write then read is bit-exact", arguments: roundTripFiles)
    func roundTrip(name: String) throws {
        let folder = try temporaryFolder("npy")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let original = try NPY.read(Fixtures.path(name))
        let copy = folder + "/" + name
        try NPY.write(original, to: copy)
        let reread = try NPY.read(copy)
        #expect(reread.isBitwiseEqual(to: original))
        #expect(reread.dtype == original.dtype)
        #expect(reread.shape == original.shape)
        // No temporary sibling is left behind by the atomic write.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [name])
        // numpy 2 writes the same header text (sorted keys, repr(shape), padded to 64), so a
        // version-1 file comes back byte for byte.
        if name != "npy_v2_f32.npy" {
            let written = try Data(contentsOf: URL(fileURLWithPath: copy))
            let numpy = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(name)))
            #expect(written == numpy)
        }
    }

    @Test("tensors made in Swift round-trip for every dtype", arguments: DType.allCases)
    func swiftMadeRoundTrip(dtype: DType) throws {
        let folder = try temporaryFolder("npy-swift")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bytes = Formula.bytes(dtype, count: 30)
        let tensor = try bytes.withUnsafeBytes { try Tensor(dtype: dtype, shape: [5, 1, 6], storage: TensorStorage(copying: $0)) }
        let path = folder + "/t.npy"
        try NPY.write(tensor, to: path)
        let reread = try NPY.read(path)
        #expect(reread.isBitwiseEqual(to: tensor))
        expectFormula(reread, dtype, [5, 1, 6])
    }

    @Test("writing into a missing folder fails with writeFailed naming the file")
    func writeFailure() throws {
        let path = "/nonexistent-samformats-folder/out.npy"
        expectFormatError(.writeFailed, file: path) {
            try NPY.write(Tensor(shape: [2], floats: [1, 2]), to: path)
        }
    }
}
