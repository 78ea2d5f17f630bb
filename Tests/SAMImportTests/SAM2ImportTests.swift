import SAMFormats
import SAMImport
import SAMTensor
import SAMTestSupport
import Testing

/// SAM 2 / 2.1 checkpoint keys to canonical names (reference_outputs/sam2_tiny's .pt, as published).
@Suite("SAM 2 import")
struct SAM2ImportTests {
    @Test("SAM2Base's names: sam_ components renamed, image mode's parameter kept, video mode's kept by name")
    func names() {
        #expect(SAM2Names.resolve("sam_mask_decoder.transformer.layers.0.mlp.layers.0.weight")
                == .canonical("mask_decoder.transformer.layers.0.mlp.layers.0.weight", wrapperPrefix: ""))
        #expect(SAM2Names.resolve("model.sam_prompt_encoder.pe_layer.positional_encoding_gaussian_matrix")
                == .canonical("prompt_encoder.pe_layer.positional_encoding_gaussian_matrix", wrapperPrefix: "model."))
        #expect(SAM2Names.resolve("no_mem_embed") == .canonical("no_mem_embed", wrapperPrefix: ""))
        #expect(SAM2Names.resolve("memory_attention.layers.0.self_attn.q_proj.weight")
                == .videoOnly("memory_attention.layers.0.self_attn.q_proj.weight", wrapperPrefix: ""))
        #expect(SAM2Names.resolve("model.memory_encoder.fuser.layers.0.dwconv.weight")
                == .videoOnly("memory_encoder.fuser.layers.0.dwconv.weight", wrapperPrefix: "model."))
        #expect(SAM2Names.resolve("maskmem_tpos_enc") == .videoOnly("maskmem_tpos_enc", wrapperPrefix: ""))
        // Not SAM 2-only names: the generic rules take them.
        #expect(SAM2Names.resolve("image_encoder.trunk.blocks.0.attn.qkv.weight") == nil)
        #expect(SAM2Names.resolve("mask_decoder.iou_token.weight") == nil)
        #expect(SAM2Names.resolve("image_encoder.layers.0.blocks.0.attn.qkv.weight") == nil)
    }

    @Test("the tiny SAM 2.1 .pt imports every weight, video mode's under their own names")
    func checkpoint() throws {
        let imported = try StateDictImport.importPyTorch(TestPaths.sam2TinyCheckpoint)
        #expect(imported.unmapped.isEmpty)
        let names = Set(imported.names)
        #expect(names.contains("no_mem_embed"))
        #expect(names.contains("image_encoder.trunk.pos_embed_window") && names.contains("image_encoder.neck.convs.3.conv.bias"))
        #expect(names.contains("prompt_encoder.not_a_point_embed.weight") && names.contains("mask_decoder.obj_score_token.weight"))
        #expect(!names.contains { $0.hasPrefix("sam_") })
        #expect(names.contains("memory_attention.layers.0.cross_attn_image.k_proj.weight") && names.contains("maskmem_tpos_enc")
                && names.contains("obj_ptr_proj.layers.2.bias") && names.contains("no_obj_embed_spatial"))
        #expect(imported.dropped.isEmpty)
        // Everything the checkpoint holds is imported.
        let stored = try PyTorchCheckpoint(path: TestPaths.sam2TinyCheckpoint).readAll()
        #expect(stored.count == names.count)
    }

    /// samexporter 0.5.0's export_sam2.py pair of the same model (TorchScript, opset 18): the encoder
    /// folds conv_s0/conv_s1 and no_mem_embed in, the decoder takes them as inputs.
    @Test("samexporter's encoder.onnx and decoder.onnx give the checkpoint's tensors bit for bit")
    func samexporterPair() throws {
        let stateDict = try StateDictImport.importPyTorch(TestPaths.sam2TinyCheckpoint)
        let encoder = try ONNXImport.importModel(TestPaths.sam2TinyReferences + "/encoder.onnx")
        let decoder = try ONNXImport.importModel(TestPaths.sam2TinyReferences + "/decoder.onnx")
        #expect(encoder.unmapped.isEmpty && decoder.unmapped.isEmpty)
        // The encoder: the trunk and neck, the decoder's high-resolution projections, no_mem_embed.
        let encoderComparison = WeightComparison(encoder, against: stateDict) {
            $0.hasPrefix("image_encoder.") || $0.hasPrefix("mask_decoder.conv_s") || $0 == "no_mem_embed"
        }
        #expect(encoderComparison.sameKeys && encoderComparison.differing.isEmpty, "\(encoderComparison)")
        // The sine position encodings' frequencies are recognised as derived, not weights.
        #expect(encoder.ignored.contains { $0.rule == .sinePositionFrequencies })
        // The decoder: everything else but the object-score head, which the export does not run; its
        // token comes out of the folded output tokens.
        let decoderComparison = WeightComparison(decoder, against: stateDict) {
            ($0.hasPrefix("prompt_encoder.") || $0.hasPrefix("mask_decoder.")) && !$0.hasPrefix("mask_decoder.conv_s")
                && !$0.hasPrefix("mask_decoder.pred_obj_score_head.")
        }
        #expect(decoderComparison.sameKeys && decoderComparison.differing.isEmpty, "\(decoderComparison)")
        #expect(decoder.tensors["mask_decoder.obj_score_token.weight"]?.origin.rule == .outputTokensSplit)
    }
}
