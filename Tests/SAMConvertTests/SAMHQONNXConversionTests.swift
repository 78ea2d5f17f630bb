import Foundation
import SAMConvert
import SAMImport
import SAMModelFile
import SAMTestSupport
import Testing

/// samconvert on the tiny SAM-HQ ViT set's TorchScript exports (`export_sam_hq_onnx.py`): the
/// encoder, which alone is plain SAM's, makes a SAM-HQ model with the official HQ decoder export; a
/// decoder tensor edited to a wrong shape is refused.
@Suite("SAM-HQ ONNX conversion")
struct SAMHQONNXConversionTests {
    static let set = TestPaths.samHQViTTinyReferences
    static let encoder = set + "/ImageEncoder.onnx", decoder = set + "/sam_hq_decoder.onnx"

    static func convert(_ inputs: [String], in folder: String) throws -> ConversionResult {
        var request = ConversionRequest(inputs: inputs, output: folder + "/model.samw")
        request.maxPoints = 100
        return try Converter.run(request)
    }

    @Test("without a config, the encoder alone is SAM's and with the HQ decoder export SAM-HQ's")
    func familyFromTheDecoder() throws {
        let folder = try TestPaths.temporaryFolder("hq-onnx")
        let alone = try Self.convert([Self.encoder], in: folder)
        #expect(alone.metadata.modelFamily == "sam")
        try FileManager.default.removeItem(atPath: folder + "/model.samw")
        let whole = try Self.convert([Self.encoder, Self.decoder], in: folder)
        #expect(whole.metadata.modelFamily == "sam_hq" && whole.metadata.schemaVersion == 3)
        #expect(whole.metadata.components == ["image_encoder", "prompt_encoder", "mask_decoder"])
    }

    /// hf_mlp's first layer (it keeps its PyTorch name in this export) with one row too few.
    @Test("an HQ decoder tensor of the wrong shape is refused naming the file and the tensor")
    func wrongShape() throws {
        let folder = try TestPaths.temporaryFolder("hq-onnx-hostile")
        let canonical = "mask_decoder.hf_mlp.layers.0.weight"
        let imported = try ONNXImport.importModel(Self.decoder)
        let stored = try #require(imported.tensors[canonical]?.origin.sources.first)
        let edited = try ONNXInitializerSwap.replacing(
            stored, in: Data(contentsOf: URL(fileURLWithPath: Self.decoder)),
            with: ONNXInitializerSwap.tensor(stored, type: 1, dims: [31, 32], raw: Data(repeating: 0, count: 31 * 32 * 4)))
        let bad = folder + "/sam_hq_decoder.onnx"
        try edited.write(to: URL(fileURLWithPath: bad))
        #expect {
            _ = try Self.convert([Self.encoder, bad], in: folder)
        } throws: { error in
            let message = "\(error)"
            return error is ConversionFailure && message.contains(bad) && message.contains(canonical) && message.contains("[31,32]")
        }
        #expect(!FileManager.default.fileExists(atPath: folder + "/model.samw"))
    }
}
