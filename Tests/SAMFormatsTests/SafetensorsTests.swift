import Foundation
import SAMFiles
import SAMFormats
import SAMTensor
import Testing

/// st_*.safetensors from make_checkpoint_fixtures.py.
@Suite("safetensors reader")
struct SafetensorsTests {
    /// st_tensors.safetensors in data order (safetensors writes larger dtypes first, then by name):
    /// name, header dtype, the dtype read, the formula's dtype (BF16 holds f16's k * 0.5 - 3), shape.
    static let expected: [(name: String, stored: String, dtype: DType, formula: DType, shape: [Int])] = [
        ("index", "I64", .int64, .int64, [2, 3]),
        ("norm.num_batches_tracked", "I64", .int64, .int64, []),
        ("norm.running_var", "F64", .float64, .float64, [4]),
        ("conv.weight", "F32", .float32, .float32, [4, 2, 3, 3]),
        ("empty", "F32", .float32, .float32, [0, 3]),
        ("offsets", "I32", .int32, .int32, [3, 2]),
        ("proj.weight", "BF16", .float32, .float16, [2, 3]),
        ("conv.bias", "F16", .float16, .float16, [4]),
        ("bytes", "U8", .uint8, .uint8, [5]),
        ("mask", "BOOL", .bool, .bool, [2, 2]),
    ]

    @Test("header: every tensor in data order with dtype, shape and contiguous byte ranges; metadata")
    func listing() throws {
        let file = try SafetensorsFile(path: Fixtures.path("st_tensors.safetensors"))
        #expect(file.names == Self.expected.map(\.name))
        #expect(file.entries.map(\.dtypeName) == Self.expected.map(\.stored))
        #expect(file.entries.map(\.shape) == Self.expected.map(\.shape))
        #expect(file.metadata == ["format": "pt", "source": "make_checkpoint_fixtures.py"])
        // Byte ranges follow each other from 0, each as long as its shape needs.
        var offset = 0
        for (entry, expected) in zip(file.entries, Self.expected) {
            let elementSize = expected.stored == "BF16" ? 2 : expected.dtype.byteSize
            #expect(entry.begin == offset, "\(entry.name)")
            #expect(entry.end - entry.begin == expected.shape.reduce(1, *) * elementSize, "\(entry.name)")
            offset = entry.end
        }
        let size = try FileManager.default.attributesOfItem(atPath: Fixtures.path("st_tensors.safetensors"))[.size] as! Int
        #expect(file.dataStart + offset == size)
    }

    @Test("every tensor has its closed-form values; BF16 is widened to f32")
    func values() throws {
        let tensors = try SafetensorsFile(path: Fixtures.path("st_tensors.safetensors")).readAll()
        #expect(tensors.keys.sorted() == Self.expected.map(\.name).sorted())
        for entry in Self.expected {
            let tensor = try #require(tensors[entry.name])
            if entry.name == "norm.num_batches_tracked" {
                #expect(tensor.dtype == .int64 && tensor.shape == [])
                #expect(tensor.int64s() == [12_345_678_901])
            } else if entry.stored == "BF16" {
                #expect(tensor.dtype == .float32 && tensor.shape == entry.shape)
                #expect(tensor.allValues == Formula.values(.float16, count: 6))
            } else {
                expectFormula(tensor, entry.dtype, entry.shape)
            }
        }
    }

    @Test("an unknown name is missingTensor")
    func missing() throws {
        let path = Fixtures.path("st_tensors.safetensors")
        let file = try SafetensorsFile(path: path)
        expectFormatError(.missingTensor, file: path, tensor: "conv.nothing") { _ = try file.tensor(named: "conv.nothing") }
    }

    static let broken: [(file: String, code: FormatError.Code, tensor: String?, mentions: String)] = [
        ("st_overlap.safetensors", .corrupt, "b", "overlap 'a'"),
        ("st_offset_past_end.safetensors", .truncated, "a", "run past"),
        ("st_shape_mismatch.safetensors", .sizeMismatch, "a", "needs 24 bytes"),
        ("st_header_huge.safetensors", .corrupt, nil, "header length"),
        ("st_header_past_end.safetensors", .truncated, nil, "needs bytes"),
        ("st_unknown_dtype.safetensors", .unsupported, "a", "F8_E4M3"),
        ("st_invalid_json.safetensors", .corrupt, nil, "JSON"),
        ("st_begin_after_end.safetensors", .corrupt, "a", "[24, 0]"),
        ("st_deep_json.safetensors", .corrupt, nil, "JSON"),
        ("st_negative_dim.safetensors", .corrupt, "a", "negative"),
        ("st_dims_overflow.safetensors", .corrupt, "a", "more elements"),
        ("st_offsets_not_pair.safetensors", .corrupt, "a", "[begin, end]"),
        ("st_header_not_object.safetensors", .corrupt, nil, "header"),
        ("st_missing_field.safetensors", .corrupt, "a", "data_offsets"),
        ("st_truncated.safetensors", .truncated, "bytes", "run past"),
        ("st_tiny.safetensors", .truncated, nil, "too short"),
    ]

    @Test("a damaged or hostile header is a typed error naming the file and tensor", arguments: broken)
    func brokenFile(_ case_: (file: String, code: FormatError.Code, tensor: String?, mentions: String)) {
        let path = Fixtures.path(case_.file)
        let error = expectFormatError(case_.code, file: path, tensor: case_.tensor) {
            _ = try SafetensorsFile(path: path).readAll()
        }
        #expect(error?.message.contains(case_.mentions) == true, "\(String(describing: error))")
    }

    /// A safetensors file from a header text and its data bytes, written to a temporary file.
    static func written(header: String, data: [UInt8]) throws -> String {
        var bytes = withUnsafeBytes(of: UInt64(header.utf8.count).littleEndian, Array.init)
        bytes += Array(header.utf8) + data
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("st-\(UUID().uuidString).safetensors").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("a name defined twice is refused, also when the second definition's bytes overlap another tensor",
          arguments: [
            // The same bytes twice: JSONDecoder kept the first silently.
            #"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#,
            // The second 'a' overlaps 'b': only one of the two reached the overlap check.
            #"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},"#
                + #""a":{"dtype":"F32","shape":[3],"data_offsets":[4,16]}}"#,
            // A field defined twice inside one entry.
            #"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"data_offsets":[8,16]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}"#,
          ])
    func duplicateNames(header: String) throws {
        let path = try Self.written(header: header, data: [UInt8](repeating: 0, count: 16))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = #expect(throws: FormatError.self) { _ = try SafetensorsFile(path: path) }
        #expect(error?.code == .corrupt && error?.file == path, "\(String(describing: error))")
        #expect(error?.message.contains("is defined twice") == true, "\(String(describing: error))")
        // A tensor named twice is named as the tensor; a field twice inside an entry is named in the message.
        let nested = header.contains(#""data_offsets":[0,8],"data_offsets""#)
        #expect(nested ? error?.tensor == nil && error?.message.contains("'data_offsets'") == true : error?.tensor == "a",
                "\(String(describing: error))")
    }
}
