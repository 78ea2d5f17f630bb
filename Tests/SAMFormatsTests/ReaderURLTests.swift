import Foundation
import SAMFiles
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing

/// The readers' URL forms read what their path forms do; a URL that is not a file URL is a
/// `FormatError` (`.unreadable`) naming it, and nothing is fetched.
@Suite("format readers with URLs")
struct ReaderURLTests {
    static func url(_ name: String) -> URL { URL(fileURLWithPath: Fixtures.path(name)) }

    @Test("ONNX, safetensors, PyTorch, HDF5 and raw blobs at file URLs give the path forms' tensors")
    func readsAsPath() throws {
        let onnx = try ONNXModel(contentsOf: Self.url("external.onnx")), onnxByPath = try ONNXModel(path: Fixtures.path("external.onnx"))
        let onnxNames = onnx.storedTensors.map(\.name)
        #expect(!onnxNames.isEmpty && onnxNames == onnxByPath.storedTensors.map(\.name))
        for name in onnxNames { #expect(try onnx.tensor(named: name).isBitwiseEqual(to: onnxByPath.tensor(named: name))) }

        let safetensors = try SafetensorsFile(contentsOf: Self.url("st_tensors.safetensors"))
        let safetensorsByPath = try SafetensorsFile(path: Fixtures.path("st_tensors.safetensors"))
        #expect(!safetensors.names.isEmpty && safetensors.names == safetensorsByPath.names)
        for name in safetensors.names { #expect(try safetensors.tensor(named: name).isBitwiseEqual(to: safetensorsByPath.tensor(named: name))) }

        let checkpoint = try PyTorchCheckpoint(contentsOf: Self.url("pth_state_dict.pth"))
        let checkpointByPath = try PyTorchCheckpoint(path: Fixtures.path("pth_state_dict.pth"))
        #expect(!checkpoint.keys.isEmpty && checkpoint.keys == checkpointByPath.keys)
        for key in checkpoint.keys { #expect(try checkpoint.tensor(named: key).isBitwiseEqual(to: checkpointByPath.tensor(named: key))) }

        let hdf5 = try HDF5File(contentsOf: Self.url("hdf5_nested.h5")), hdf5ByPath = try HDF5File(path: Fixtures.path("hdf5_nested.h5"))
        #expect(!hdf5.datasets.isEmpty && hdf5.datasets.count == hdf5ByPath.datasets.count)
        for (a, b) in zip(hdf5.datasets, hdf5ByPath.datasets) { #expect(try hdf5.tensor(a).isBitwiseEqual(to: hdf5ByPath.tensor(b))) }

        let blob = try RawBlob.read(contentsOf: Self.url("blob_f32_1x4x3x3.bin"), dtype: .float32, shape: [1, 4, 3, 3])
        #expect(blob.isBitwiseEqual(to: try RawBlob.read(Fixtures.path("blob_f32_1x4x3x3.bin"), dtype: .float32, shape: [1, 4, 3, 3])))
    }

    @Test("a bad file at a file URL gives the path form's error")
    func errorsAsPath() {
        let pairs: [(String, FormatError?, FormatError?)] = [
            ("random.onnx", Self.failure { _ = try ONNXModel(contentsOf: Self.url("random.onnx")) },
             Self.failure { _ = try ONNXModel(path: Fixtures.path("random.onnx")) }),
            ("st_truncated.safetensors", Self.failure { _ = try SafetensorsFile(contentsOf: Self.url("st_truncated.safetensors")) },
             Self.failure { _ = try SafetensorsFile(path: Fixtures.path("st_truncated.safetensors")) }),
            ("pth_truncated.pth", Self.failure { _ = try PyTorchCheckpoint(contentsOf: Self.url("pth_truncated.pth")) },
             Self.failure { _ = try PyTorchCheckpoint(path: Fixtures.path("pth_truncated.pth")) }),
            ("hdf5_truncated.h5", Self.failure { _ = try HDF5File(contentsOf: Self.url("hdf5_truncated.h5")) },
             Self.failure { _ = try HDF5File(path: Fixtures.path("hdf5_truncated.h5")) }),
            ("blob, wrong shape", Self.failure { _ = try RawBlob.read(contentsOf: Self.url("blob_f32_1x4x3x3.bin"), dtype: .float32, shape: [1, 4]) },
             Self.failure { _ = try RawBlob.read(Fixtures.path("blob_f32_1x4x3x3.bin"), dtype: .float32, shape: [1, 4]) }),
        ]
        for (name, byURL, byPath) in pairs {
            #expect(byURL != nil, "\(name)")
            #expect(byURL == byPath, "\(name)")
        }
    }

    @Test("a URL that is not a file URL is refused naming it, by every reader", arguments: [
        "https://example.com/model.onnx", "https://example.com/model.safetensors", "https://example.com/model.pth",
        "https://example.com/model.h5", "https://example.com/embeddings.bin",
    ])
    func remoteURLRefused(address: String) {
        let remote = URL(string: address)!
        let failure: FormatError?
        switch remote.pathExtension {
        case "onnx": failure = Self.failure { _ = try ONNXModel(contentsOf: remote) }
        case "safetensors": failure = Self.failure { _ = try SafetensorsFile(contentsOf: remote) }
        case "pth": failure = Self.failure { _ = try PyTorchCheckpoint(contentsOf: remote) }
        case "h5": failure = Self.failure { _ = try HDF5File(contentsOf: remote) }
        default: failure = Self.failure { _ = try RawBlob.read(contentsOf: remote, dtype: .float32, shape: [1]) }
        }
        #expect(failure?.code == .unreadable)
        #expect(failure?.file == address)
        #expect(failure?.message.contains("not a file URL") == true, "\(String(describing: failure))")
    }

    /// The `FormatError` `body` throws (nil if it throws none).
    static func failure(_ body: () throws -> Void) -> FormatError? {
        do { try body() } catch let error as FormatError { return error } catch { Issue.record("not a FormatError: \(error)") }
        return nil
    }
}
