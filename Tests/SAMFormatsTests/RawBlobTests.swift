import SAMFormats
import SAMTensor
import Testing

@Suite("Raw blob reader")
struct RawBlobTests {
    static let blob = Fixtures.path("blob_f32_1x4x3x3.bin")

    @Test("a headerless f32 [1,4,3,3] blob reads with the closed-form values")
    func readsBlob() throws {
        let tensor = try RawBlob.read(Self.blob, dtype: .float32, shape: [1, 4, 3, 3], tensorName: "blob")
        expectFormula(tensor, .float32, [1, 4, 3, 3])
        #expect(tensor.byteCount == 144)
        #expect(tensor.floats() == (0..<36).map { Float($0) * 0.25 - 1 })
    }

    @Test("the blob is little-endian: its first f32 (-1.0) is bytes 00 00 80 BF")
    func littleEndian() throws {
        let bytes = try RawBlob.read(Self.blob, dtype: .uint8, shape: [144])
        #expect(bytes.int64s().prefix(8) == [0x00, 0x00, 0x80, 0xBF, 0x00, 0x00, 0x40, 0xBF])  // -1, -0.75
    }

    @Test("a declared shape of another size is a sizeMismatch naming file and tensor")
    func wrongShape() {
        expectFormatError(.sizeMismatch, file: Self.blob, tensor: "image_pe") {
            _ = try RawBlob.read(Self.blob, dtype: .float32, shape: [1, 4, 3, 4], tensorName: "image_pe")
        }
        expectFormatError(.sizeMismatch, file: Self.blob, tensor: nil) {
            _ = try RawBlob.read(Self.blob, dtype: .float64, shape: [1, 4, 3, 3])
        }
        expectFormatError(.sizeMismatch, file: Self.blob, tensor: "x") {
            _ = try RawBlob.read(Self.blob, dtype: .float32, shape: [-1, 36], tensorName: "x")
        }
    }

    @Test("a missing blob is unreadable")
    func missing() {
        let path = Fixtures.path("no_such_blob.bin")
        expectFormatError(.unreadable, file: path, tensor: nil) {
            _ = try RawBlob.read(path, dtype: .float32, shape: [1])
        }
    }

    @Test("a missing blob read under a tensor name names that tensor")
    func missingNamed() {
        let path = Fixtures.path("no_such_blob.bin")
        expectFormatError(.unreadable, file: path, tensor: "image_pe") {
            _ = try RawBlob.read(path, dtype: .float32, shape: [1], tensorName: "image_pe")
        }
    }
}
