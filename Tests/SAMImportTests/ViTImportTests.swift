import SAMImport
import SAMTensor
import SAMTestSupport
import Testing

/// reference_outputs/vit_tiny: the tiny SAM ViT exported with the TorchScript exporter
/// (export_reference.py): every ONNX route gives the state dict's tensors bit for bit.
@Suite("ViT import")
struct ViTImportTests {
    static func path(_ name: String) -> String { TestPaths.vitTinyReferences + "/" + name }
    static let stateDict: ImportedWeights = try! StateDictImport.importHDF5(path("sam.h5"))

    @Test("TorchScript ImageEncoder.onnx gives the state dict's ViT encoder (relative positions included)")
    func encoder() throws {
        let encoder = try ONNXImport.importModel(Self.path("ImageEncoder.onnx"))
        let comparison = WeightComparison(encoder, against: Self.stateDict, components: [.imageEncoder])
        comparison.expectMatches()
        #expect(encoder.names.contains("image_encoder.blocks.1.attn.rel_pos_h"))
        #expect(encoder.names.filter { $0.hasPrefix("image_encoder.") }.count == 65)
    }

    @Test("the official sam_decoder.onnx gives the state dict's prompt encoder and mask decoder")
    func decoder() throws {
        let decoder = try ONNXImport.importModel(Self.path("sam_decoder.onnx"))
        let comparison = WeightComparison(decoder, against: Self.stateDict, components: [.promptEncoder, .maskDecoder])
        #expect(comparison.sameKeys && comparison.differing.isEmpty, "\(comparison)")
    }
}
