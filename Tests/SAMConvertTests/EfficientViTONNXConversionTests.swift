import Foundation
import SAMConvert
import SAMImport
import SAMModelFile
import SAMTestSupport
import Testing

/// samconvert on the tiny EfficientViT-SAM set's TorchScript exports (`export_efficientvit_sam.py
/// --onnx`): the encoder alone and with the official-style decoder, and the same encoder with a
/// tensor edited to a wrong shape.
@Suite("EfficientViT-SAM ONNX conversion")
struct EfficientViTONNXConversionTests {
    static let set = TestPaths.efficientViTSAMTinyReferences
    static let encoder = set + "/ImageEncoder.onnx", decoder = set + "/efficientvit_sam_decoder.onnx"

    static func convert(_ inputs: [String], in folder: String, config: Bool = true) throws -> ConversionResult {
        var request = ConversionRequest(inputs: inputs, output: folder + "/model.samw")
        if config { request.configFile = set + "/config.json" }
        return try Converter.run(request)
    }

    @Test("the encoder export converts alone; with the decoder export it makes the whole model")
    func converts() throws {
        let folder = try TestPaths.temporaryFolder("evit-onnx")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let alone = try Self.convert([Self.encoder], in: folder)
        #expect(alone.metadata.modelFamily == "efficientvit_sam" && alone.metadata.components == ["image_encoder"])
        try FileManager.default.removeItem(atPath: folder + "/model.samw")
        let whole = try Self.convert([Self.encoder, Self.decoder], in: folder)
        #expect(whole.metadata.components == ["image_encoder", "prompt_encoder", "mask_decoder"])
        #expect(whole.imported.unmapped.isEmpty && whole.imported.agreements.isEmpty)
    }

    /// Without a config the encoder's layout is read from the shapes: the exporter gave every conv a
    /// bias, so which stages have "fewer norms" comes from the published layout with these sizes, not
    /// from the biases (which would call every stage fewer-norm).
    @Test("without a config, the folded BatchNorms do not make every stage fewer-norm")
    func fewerNormFromTemplate() throws {
        let folder = try TestPaths.temporaryFolder("evit-onnx")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var request = ConversionRequest(inputs: [Self.encoder], output: folder + "/model.samw")
        request.maxPoints = 100
        let result = try Converter.run(request)
        let json = try #require(String(data: try JSONEncoder().encode(result.metadata.config), encoding: .utf8))
        #expect(json.contains("\"fewerNorm\":[false,false,false,true,true]"), "\(json)")
    }

    /// A conv weight cut to the wrong kernel size and the output norm's [1,C,1,1] affine widened by a
    /// channel: refused, naming the file and the tensor.
    @Test("a tensor of the wrong shape is refused naming the file and the tensor", arguments: ["conv", "norm"])
    func wrongShape(which: String) throws {
        let folder = try TestPaths.temporaryFolder("evit-onnx")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let imported = try ONNXImport.importModel(Self.encoder)
        let canonical = which == "conv" ? "image_encoder.backbone.stages.1.op_list.1.main.spatial_conv.conv.weight"
            : "image_encoder.norm.weight"
        let stored = try #require(imported.tensors[canonical]?.origin.sources.first)
        #expect(stored.hasPrefix(which == "conv" ? "onnx::Conv_" : "onnx::Mul_"))
        let (dims, count) = which == "conv" ? ([32, 8, 2, 3], 32 * 8 * 2 * 3) : ([1, 33, 1, 1], 33)
        let raw = Data(repeating: 0, count: count * 4)
        let edited = try ONNXInitializerSwap.replacing(stored, in: Data(contentsOf: URL(fileURLWithPath: Self.encoder)),
                                                       with: ONNXInitializerSwap.tensor(stored, type: 1, dims: dims, raw: raw))
        let bad = folder + "/ImageEncoder.onnx"
        try edited.write(to: URL(fileURLWithPath: bad))
        #expect {
            _ = try Self.convert([bad], in: folder)
        } throws: { error in
            let message = "\(error)"
            return error is ConversionFailure && message.contains(bad) && message.contains(canonical)
                && message.contains(which == "conv" ? "[32,8,2,3]" : "[33]")
        }
        #expect(!FileManager.default.fileExists(atPath: folder + "/model.samw"))
    }
}
