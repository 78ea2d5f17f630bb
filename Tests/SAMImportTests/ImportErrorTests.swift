import Foundation
import SAMFormats
import SAMImport
import SAMTensor
import SAMTestSupport
import Testing

@Suite("Import errors")
struct ImportErrorTests {
    static func tiny(_ name: String) -> String { TestPaths.tinyReferences + "/" + name }

    /// A copy of the tiny official decoder with one element of `tensor` changed in place (its
    /// raw bytes occur once in the file).
    static func decoderWithModifiedWeight(_ tensor: String, in folder: String) throws -> String {
        let source = tiny("mobile_sam_decoder.onnx")
        let stored = try ONNXModel(path: source).tensor(named: tensor)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        let needle = Data(stored.storage.bytes)
        let range = try #require(bytes.range(of: needle), "raw bytes of \(tensor) not found")
        #expect(bytes[range.upperBound...].range(of: needle) == nil, "raw bytes of \(tensor) occur twice")
        var value = stored.floats()[0] + 0.125
        withUnsafeBytes(of: &value) { bytes.replaceSubrange(range.lowerBound..<range.lowerBound + 4, with: $0) }
        let path = folder + "/mobile_sam_decoder.onnx"
        try bytes.write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("a decoder weight that disagrees with the h5 is a merge error naming both files and the tensor")
    func conflictingWeight() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let patched = try Self.decoderWithModifiedWeight("mask_decoder.transformer.layers.0.norm1.weight", in: folder)
        #expect(throws: Never.self) { try ONNXImport.importModel(patched) }  // alone it is a valid model
        let error = try #require(throws: ImportError.self) {
            try SAMImporter.importFiles([Self.tiny("mobile_sam.h5"), patched])
        }
        #expect(error.code == .conflictingTensors)
        #expect(error.tensor == "mask_decoder.transformer.layers.0.norm1.weight")
        #expect(error.file == Self.tiny("mobile_sam.h5") && error.otherFile == patched)
        #expect(error.description.contains("bit-exact"))
        print("conflict error: \(error)")
    }

    @Test("a BN-folded conv beyond the fold tolerance is a merge error too")
    func foldBeyondTolerance() throws {
        var options = ImportOptions()
        options.computedTolerance = AgreementTolerance(absolute: 0, relative: 0)
        let error = try #require(throws: ImportError.self) {
            try SAMImporter.importFiles([Self.tiny("mobile_sam.h5"), Self.tiny("ImageEncoder.onnx")], options: options)
        }
        #expect(error.code == .conflictingTensors)
        #expect(error.tensor?.hasSuffix(".c.weight") == true || error.tensor?.hasSuffix(".c.bias") == true)
    }

    @Test("an unmapped weight-like tensor is an error listing it; allowUnmapped lists it in the result")
    func unmappedTensor() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var file = ONNXTestFile()
        file.inputs = ["x"]
        file.outputs = ["y"]
        file.initializer("md.iou_prediction_head.layers.0.bias", [4])
        // Read at the root scope, and its product feeds no named neighbour: no module to name it after.
        file.initializer("onnx::MatMul_7", [4, 4])
        file.initializer("mystery", [3, 2])          // read by nothing
        file.initializer("onnx::Mul_9", [1])         // a scalar: not weight-like
        file.node("MatMul", "/MatMul", ["x", "onnx::MatMul_7"], ["h"])
        file.node("Relu", "/Relu", ["h"], ["r"])
        file.node("Add", "/iou_prediction_head/layers.0/Add", ["r", "md.iou_prediction_head.layers.0.bias"], ["y"])
        let path = folder + "/Decoder.onnx"
        try file.write(to: path)

        let error = try #require(throws: ImportError.self) { try ONNXImport.importModel(path) }
        #expect(error.code == .unmappedTensors)
        #expect(error.unmapped.map(\.name) == ["onnx::MatMul_7", "mystery"])
        #expect(error.description.contains("onnx::MatMul_7 f32 [4,4]: read by MatMul '/MatMul' input 1 (root scope)"))
        print("unmapped error: \(error)")

        var options = ImportOptions()
        options.allowUnmapped = true
        let weights = try ONNXImport.importModel(path, options: options)
        #expect(weights.names == ["mask_decoder.iou_prediction_head.layers.0.bias"])
        #expect(weights.unmapped.map(\.name) == ["onnx::MatMul_7", "mystery"])
    }

    @Test("a dense-PE blob with the wrong byte count is an error naming the file")
    func wrongBlobSize() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let blob = folder + "/image_points_embeddings.bin"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.tiny("image_points_embeddings.bin")))
        try bytes.dropLast(4).write(to: URL(fileURLWithPath: blob))

        // g stated by the encoder's output shape: the byte count must match it exactly.
        let stated = try #require(throws: ImportError.self) {
            try SAMImporter.importFiles([Self.tiny("ImageEncoder.onnx"), Self.tiny("mobile_sam_decoder.onnx"), blob])
        }
        #expect(stated.code == .sizeMismatch && stated.file == blob)
        // g inferred from the byte count: 8188 bytes is not C*g*g floats for C = 32.
        let inferred = try #require(throws: ImportError.self) { try SAMImporter.importFiles([Self.tiny("mobile_sam.h5"), blob]) }
        #expect(inferred.code == .sizeMismatch && inferred.file == blob)
        print("blob errors: \(stated) / \(inferred)")
    }

    @Test("a blob alone cannot be sized; unknown file kinds are refused")
    func blobWithoutContext() throws {
        let alone = try #require(throws: ImportError.self) { try SAMImporter.importFiles([Self.tiny("image_points_embeddings.bin")]) }
        #expect(alone.code == .missingContext)
        let unknown = try #require(throws: ImportError.self) { try SAMImporter.importFiles([Self.tiny("config.json")]) }
        #expect(unknown.code == .unsupportedInput)
    }

    @Test("an attention-bias table that is not a gather of one bias per offset is refused, naming the tensor")
    func inconsistentAttentionBiasTable() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Window 2: N = 4 points, 4 offsets. Table [1,4,4] whose (0,1) and (2,3) (same offset (0,1)) differ.
        var table = [Float](repeating: 0, count: 16)
        for index in 0..<16 { table[index] = Float(index) }
        var file = ONNXTestFile()
        file.inputs = ["logits"]
        file.outputs = ["y"]
        file.nodes.append(.init(op: "Constant", name: "/layers.1/blocks.0/attn/Constant_2", inputs: [],
                                outputs: ["/layers.1/blocks.0/attn/Constant_2_output_0"],
                                value: .init(name: "", shape: [1, 4, 4], values: table)))
        file.node("Add", "/layers.1/blocks.0/attn/Add", ["logits", "/layers.1/blocks.0/attn/Constant_2_output_0"], ["y"])
        let path = folder + "/ImageEncoder.onnx"
        try file.write(to: path)
        let error = try #require(throws: ImportError.self) { try ONNXImport.importModel(path) }
        #expect(error.code == .invalidLayout)
        #expect(error.tensor == "/layers.1/blocks.0/attn/Constant_2_output_0")
        print("attention-bias error: \(error)")
    }
}
