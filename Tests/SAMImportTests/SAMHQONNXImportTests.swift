import SAMFormats
import SAMImport
import SAMTensor
import SAMTestSupport
import Testing

/// The committed tiny SAM-HQ ViT set's TorchScript exports (`export_sam_hq_onnx.py`): the encoder with
/// both outputs, and the official decoder as SysCV sam-hq's scripts/export_onnx_model.py exports it
/// (`SamOnnxModel` calling the HQ modules from its own forward, so their scopes start at `hf_mlp`,
/// `compress_vit_feat` ...; the output tokens with the HQ token last folded into one constant).
@Suite("SAM-HQ ONNX import")
struct SAMHQONNXImportTests {
    static let set = TestPaths.samHQViTTinyReferences
    static let checkpoint: ImportedWeights = try! StateDictImport.importPyTorch(set + "/sam_hq.pth")

    @Test("the decoder export gives the checkpoint's prompt encoder and HQ decoder bit for bit")
    func decoderMatchesCheckpoint() throws {
        let decoder = try ONNXImport.importModel(Self.set + "/sam_hq_decoder.onnx")
        #expect(decoder.components == [.promptEncoder, .maskDecoder] && decoder.unmapped.isEmpty)
        let comparison = WeightComparison(decoder, against: Self.checkpoint, components: [.promptEncoder, .maskDecoder])
        comparison.expectMatches()
        #expect(comparison.differing.isEmpty && comparison.bitExact.count == Self.checkpoint.names.filter {
            !$0.hasPrefix("image_encoder.")
        }.count, "\(comparison)")
        // cat([iou_token, mask_tokens, hf_token]) folded into one [1, 6, C] constant: the last row is the HQ token.
        let hqToken = try #require(decoder.tensors["mask_decoder.hf_token.weight"])
        #expect(hqToken.origin.rule == .outputTokensSplit && decoder.tensors["mask_decoder.mask_tokens.weight"]?.shape == [4, 32])
        #expect(decoder.tensors["mask_decoder.obj_score_token.weight"] == nil)
        // hf_mlp's layers are the decoder's, not TinyViT's `layers`.
        #expect(decoder.tensors["mask_decoder.hf_mlp.layers.0.weight"] != nil && !decoder.names.contains { $0.hasPrefix("image_encoder.") })
    }

    @Test("the encoder export gives the checkpoint's ViT bit for bit")
    func encoderMatchesCheckpoint() throws {
        let encoder = try ONNXImport.importModel(Self.set + "/ImageEncoder.onnx")
        #expect(encoder.components == [.imageEncoder] && encoder.unmapped.isEmpty)
        let comparison = WeightComparison(encoder, against: Self.checkpoint, components: [.imageEncoder])
        comparison.expectMatches()
        #expect(comparison.differing.isEmpty, "\(comparison)")
    }
}
