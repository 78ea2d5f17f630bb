import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing

/// Cross-format checks on a full-size reference set (a MobileSAM export made with the upstream
/// Python package, see its README.md): `TestPaths.fullSizeSet`, i.e. `SAM_REFERENCE_SET_DIR` or
/// ../shared/fixtures/mobilesam-seed0 beside the clone (/work/shared/fixtures/mobilesam-seed0 here).
/// Runs only where the full-size set exists; `make check-reference-set` runs it (and requires the full-size set).
@Suite("Full-size set: cross-format: mobilesam-seed0",
       .enabled(if: TestPaths.fullSizeSetIsPresent, "no full-size reference set (SAM_REFERENCE_SET_DIR)"))
struct FullSizeSetCrossFormatTests {
    static let folder = TestPaths.fullSizeSet

    /// Wrappers exporters put around the state-dict names (`SamOnnxModel` keeps `self.model`).
    static let prefixes = ["", "model.", "md.", "pe."]

    @Test("decoder initializers named like state-dict keys equal the HDF5 datasets bit for bit")
    func decoderInitializersMatchHDF5() throws {
        let model = try ONNXModel(path: Self.folder + "/mobile_sam_decoder.onnx")
        let h5 = try HDF5File(path: Self.folder + "/mobile_sam.h5")
        var matched: [String] = []
        var unmatched: [String] = []
        for initializer in model.graph.initializers {
            let key = Self.prefixes.lazy.compactMap { prefix -> String? in
                guard initializer.name.hasPrefix(prefix) else { return nil }
                let stripped = String(initializer.name.dropFirst(prefix.count))
                return h5.dataset(named: stripped) != nil ? stripped : nil
            }.first
            guard let key else { unmatched.append(initializer.name); continue }
            let onnx = try model.tensor(named: initializer.name)
            let state = try h5.tensor(named: key)
            #expect(onnx.isBitwiseEqual(to: state), "\(initializer.name) vs \(key): \(onnx.dtype)\(onnx.shape) vs \(state.dtype)\(state.shape)")
            matched.append(initializer.name)
        }
        print("mobile_sam_decoder.onnx: \(matched.count) of \(model.graph.initializers.count) initializers match an HDF5 dataset "
              + "(\(matched.filter { $0.hasPrefix("model.") }.count) after stripping 'model.'); "
              + "\(unmatched.count) have exporter names (\(unmatched.prefix(3).joined(separator: ", ")) ...)")
        #expect(matched.count >= 1)
        #expect(matched.contains("mask_decoder.transformer.layers.0.self_attn.q_proj.bias"))
        #expect(matched.contains("model.prompt_encoder.pe_layer.positional_encoding_gaussian_matrix"))
    }

    /// The split models name their weights relative to the submodule the exporter was given, under
    /// the wrapper's attribute (`pe.`, `md.`) or none; the state-dict key adds the submodule back.
    @Test("split-model initializers named after their submodule equal the HDF5 datasets bit for bit",
          arguments: [("ImageEncoder.onnx", "", "image_encoder."),
                      ("PromptEncoder.onnx", "pe.", "prompt_encoder."),
                      ("MaskDecoder.onnx", "md.", "mask_decoder.")])
    func splitInitializersMatchHDF5(file: String, wrapper: String, submodule: String) throws {
        let model = try ONNXModel(path: Self.folder + "/" + file)
        let h5 = try HDF5File(path: Self.folder + "/mobile_sam.h5")
        var matched = 0
        for initializer in model.graph.initializers where initializer.name.hasPrefix(wrapper) {
            let key = submodule + initializer.name.dropFirst(wrapper.count)
            guard h5.dataset(named: key) != nil else { continue }
            let onnx = try model.tensor(named: initializer.name)
            let state = try h5.tensor(named: key)
            #expect(onnx.isBitwiseEqual(to: state), "\(initializer.name) vs \(key)")
            matched += 1
        }
        print("\(file): \(matched) of \(model.graph.initializers.count) initializers equal the dataset '\(submodule)' + name less '\(wrapper)'")
        #expect(matched >= 1)
    }

    @Test("image_points_embeddings.bin reads as f32 [1,256,64,64], 4194304 bytes")
    func denseEmbeddingBlob() throws {
        let path = Self.folder + "/image_points_embeddings.bin"
        let tensor = try RawBlob.read(path, dtype: .float32, shape: [1, 256, 64, 64], tensorName: "image_pe")
        #expect(tensor.shape == [1, 256, 64, 64])
        #expect(tensor.byteCount == 4_194_304)
        let allFinite = tensor.floats().allSatisfy { $0.isFinite }
        #expect(allFinite)
        expectFormatError(.sizeMismatch, file: path, tensor: "image_pe") {
            _ = try RawBlob.read(path, dtype: .float32, shape: [1, 256, 64, 65], tensorName: "image_pe")
        }
    }
}
