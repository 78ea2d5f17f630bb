import SAMImport
import SAMTensor
import SAMTestSupport
import Testing

/// reference_outputs/tiny/dynamo: the tiny model exported with `torch.onnx.export(dynamo=True,
/// external_data=True)` by converters/export_dynamo.py (see its docstring for what the exporter
/// does to names and layouts).
@Suite("Dynamo import")
struct DynamoImportTests {
    static func path(_ name: String) -> String { TestPaths.tinyReferences + "/" + name }

    @Test("dynamo ImageEncoder.onnx (prefix model., external data, optimizer-fused BN) gives the h5's encoder")
    func encoder() throws {
        let encoder = try ONNXImport.importModel(Self.path("dynamo/ImageEncoder.onnx"))
        let comparison = WeightComparison(encoder, against: TinyImportTests.stateDict, components: [.imageEncoder])
        comparison.expectMatches()
        print("tiny dynamo ImageEncoder.onnx vs mobile_sam.h5: \(comparison)")
        // Names kept under the wrapper, names recovered from metadata scopes, eval-mode bias caches inverted.
        #expect(encoder.tensors["image_encoder.neck.2.weight"]?.origin.sources == ["model.neck.2.weight"])
        #expect(encoder.tensors["image_encoder.layers.1.blocks.0.attn.qkv.weight"]?.origin.rule == .linearWeightTransposed)
        #expect(encoder.tensors["image_encoder.neck.1.weight"]?.origin.rule == .channelAffineReshaped)
        #expect(encoder.tensors["image_encoder.layers.2.blocks.1.attn.attention_biases"]?.origin.sources == ["model.layers.2.blocks.1.attn.ab"])
        #expect(encoder.tensors["image_encoder.patch_embed.seq.0.c.bias"]?.origin.sources == ["model.patch_embed.seq.0.c.weight_bias"])
    }

    @Test("dynamo official decoder gives the h5's prompt encoder and mask decoder, and its folded dense PE")
    func decoder() throws {
        let decoder = try ONNXImport.importModel(Self.path("dynamo/mobile_sam_decoder.onnx"))
        let comparison = WeightComparison(decoder, against: TinyImportTests.stateDict, components: [.promptEncoder, .maskDecoder])
        #expect(comparison.sameKeys && comparison.differing.isEmpty, "\(comparison)")
        let dense = try #require(decoder.denseImagePE)
        #expect(dense.origin.rule == .densePETokensUnflattened)
        #expect(dense.tensor.shape == [1, 32, 8, 8])

        // The exporter's constant folding of get_dense_pe() vs PyTorch's (the blob).
        let merged = try SAMImporter.importFiles([Self.path("dynamo/mobile_sam_decoder.onnx"), Self.path("image_points_embeddings.bin")])
        let agreement = try #require(merged.agreements.first { $0.tensor == "denseImagePE" })
        print("tiny dynamo folded dense PE vs image_points_embeddings.bin: \(agreement)")
        #expect(agreement.maxAbsDifference <= 1e-5)
    }
}
