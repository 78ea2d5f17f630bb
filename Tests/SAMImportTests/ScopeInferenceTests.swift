import Foundation
import SAMTensor
import Testing
@testable import SAMImport

/// Every rule that finds a node's module when the exporter did not state it, on hand-built graphs.
@Suite("Scopes from fx_node metadata and named neighbours")
struct ScopeInferenceTests {
    static let fxLinear = "%linear_4 : [num_users=1] = call_function[target=torch.ops.aten.linear.default](args = "
        + "(%add_13, %p_mask_decoder_transformer_layers_0_cross_attn_token_to_image_q_proj_weight, "
        + "%p_mask_decoder_transformer_layers_0_cross_attn_token_to_image_q_proj_bias), kwargs = {})"

    @Test("fx_node calls parse in both spellings, lists and literals kept apart")
    func fxNodeParsing() throws {
        let long = try #require(FXNodeCall(metadata: Self.fxLinear))
        #expect(long.target == "aten.linear.default")
        #expect(long.arguments.count == 3)
        #expect(long.parameterPlaceholders == ["mask_decoder_transformer_layers_0_cross_attn_token_to_image_q_proj_weight",
                                               "mask_decoder_transformer_layers_0_cross_attn_token_to_image_q_proj_bias"])
        let short = try #require(FXNodeCall(metadata: "aten.cat.default([%expand_1, %add_5], 1)"))
        #expect(short.target == "aten.cat.default")
        #expect(short.arguments == [.list(["expand_1", "add_5"]), .literal("1")])
        let buffer = try #require(FXNodeCall(metadata: "aten.matmul.default(%sub, %b_model_prompt_encoder_pe_layer_positional_encoding_gaussian_matrix)"))
        #expect(buffer.parameterPlaceholders == ["model_prompt_encoder_pe_layer_positional_encoding_gaussian_matrix"])
        #expect(FXNodeCall(metadata: "not a call") == nil)
    }

    @Test("flattened parameter paths get their dots back",
          arguments: [
            ("mask_decoder_transformer_layers_0_cross_attn_token_to_image_q_proj_weight",
             "mask_decoder.transformer.layers.0.cross_attn_token_to_image.q_proj.weight"),
            ("model_prompt_encoder_pe_layer_positional_encoding_gaussian_matrix",
             "model.prompt_encoder.pe_layer.positional_encoding_gaussian_matrix"),
            ("model_layers_1_blocks_0_local_conv_bn_running_mean", "model.layers.1.blocks.0.local_conv.bn.running_mean"),
            ("mask_decoder_output_hypernetworks_mlps_3_layers_2_bias", "mask_decoder.output_hypernetworks_mlps.3.layers.2.bias"),
            ("prompt_encoder_mask_downscaling_4_weight", "prompt_encoder.mask_downscaling.4.weight"),
          ])
    func unflatten(flattened: String, dotted: String) {
        #expect(FlattenedParameterNames(dottedNames: []).dotted(flattened) == dotted)
    }

    @Test("attribute names with underscores are learnt from the file's own dotted names")
    func vocabularyFromFile() {
        let names = FlattenedParameterNames(dottedNames: ["wrapper.sam_decoder.extra_head.weight"])
        #expect(names.dotted("wrapper_sam_decoder_extra_head_bias") == "wrapper.sam_decoder.extra_head.bias")
        #expect(FlattenedParameterNames(dottedNames: []).dotted("wrapper_sam_decoder_extra_head_bias")
                == "wrapper.sam.decoder.extra.head.bias")
    }

    @Test("a folded Linear weight in a flat graph is named by its fx_node and transposed back")
    func linearFromFXNode() throws {
        var file = ONNXTestFile()
        file.inputs = ["x"]
        file.outputs = ["y"]
        file.initializer("val_110", [3, 2], [1, 2, 3, 4, 5, 6])  // [in, out]
        file.node("MatMul", "node_MatMul_109", ["x", "val_110"], ["y"], metadata: [
            "namespace": ": segment_anything.utils.onnx.SamOnnxModel/linear_4: aten.linear.default",
            "pkg.torch.onnx.name_scopes": "['', 'linear_4']",
            "pkg.torch.onnx.fx_node": Self.fxLinear,
        ])
        let weights = try SyntheticONNXTests.importing(file)
        let name = "mask_decoder.transformer.layers.0.cross_attn_token_to_image.q_proj.weight"
        #expect(weights[name]?.shape == [2, 3])
        #expect(weights[name]?.floats() == [1, 3, 5, 2, 4, 6])
        #expect(weights.tensors[name]?.origin.namedBy == ScopeEvidence.fxNode.rawValue)
    }

    @Test("without metadata, a MatMul weight is the Linear whose named bias its product is added to")
    func linearFromBias() throws {
        var file = ONNXTestFile()
        file.inputs = ["x"]
        file.outputs = ["y"]
        file.initializer("val_75", [2, 2], [1, 2, 3, 4])
        file.initializer("model.mask_decoder.transformer.layers.0.self_attn.v_proj.bias", [2])
        file.node("MatMul", "node_MatMul_76", ["x", "val_75"], ["h"])
        file.node("Add", "node_Add_77", ["h", "model.mask_decoder.transformer.layers.0.self_attn.v_proj.bias"], ["y"])
        let weights = try SyntheticONNXTests.importing(file)
        let name = "mask_decoder.transformer.layers.0.self_attn.v_proj.weight"
        #expect(weights[name]?.floats() == [1, 3, 2, 4])
        #expect(weights.tensors[name]?.origin.namedBy == ScopeEvidence.linearBias.rawValue)
    }

    /// ConvTranspose `output_upscaling.0`, then LayerNorm2d decomposed: mean, centred, variance,
    /// divided, then the folded [C,1,1] weight and bias (`withWeight`), or the bias alone where a
    /// tool dropped a multiply by ones.
    static func layerNorm2dGraph(withWeight: Bool) -> ONNXTestFile {
        var file = ONNXTestFile()
        file.inputs = ["x"]
        file.outputs = ["y"]
        file.initializer("model.mask_decoder.output_upscaling.0.weight", [2, 3, 2, 2])
        file.initializer("unsqueeze_12", [3, 1, 1], [2, 3, 4])
        file.initializer("unsqueeze_14", [3, 1, 1], [-1, 0, 1])
        file.node("ConvTranspose", "node_conv_transpose2d", ["x", "model.mask_decoder.output_upscaling.0.weight"], ["c"])
        file.node("ReduceMean", "node_mean", ["c"], ["u"])
        file.node("Sub", "node_sub", ["c", "u"], ["d"])
        file.node("Mul", "node_pow", ["d", "d"], ["d2"])
        file.node("ReduceMean", "node_mean_1", ["d2"], ["s"])
        file.node("Sqrt", "node_sqrt", ["s"], ["r"])
        file.node("Div", "node_div", ["d", "r"], ["n"])
        if withWeight {
            file.node("Mul", "node_mul_118", ["unsqueeze_12", "n"], ["w"])
            file.node("Add", "node_add_33", ["w", "unsqueeze_14"], ["y"])
        } else {
            file.initializers.removeAll { $0.name == "unsqueeze_12" }
            file.node("Add", "node_add_33", ["n", "unsqueeze_14"], ["y"])
        }
        return file
    }

    @Test("LayerNorm2d affines [C,1,1] belong to the Sequential child after the layer they normalise")
    func layerNorm2dByPosition() throws {
        let weights = try SyntheticONNXTests.importing(Self.layerNorm2dGraph(withWeight: true))
        #expect(weights["mask_decoder.output_upscaling.1.weight"]?.floats() == [2, 3, 4])
        #expect(weights["mask_decoder.output_upscaling.1.bias"]?.floats() == [-1, 0, 1])
        #expect(weights.tensors["mask_decoder.output_upscaling.1.bias"]?.origin.namedBy == ScopeEvidence.layerNorm2dPosition.rawValue)

        let biasOnly = try SyntheticONNXTests.importing(Self.layerNorm2dGraph(withWeight: false))
        #expect(biasOnly["mask_decoder.output_upscaling.1.bias"]?.floats() == [-1, 0, 1])
        #expect(biasOnly["mask_decoder.output_upscaling.1.weight"] == nil)
    }

    @Test("a [C,1,1] multiply whose input was never normalised is not a LayerNorm2d")
    func notLayerNorm2d() throws {
        var file = ONNXTestFile()
        file.inputs = ["x"]
        file.outputs = ["y"]
        file.initializer("model.mask_decoder.output_upscaling.0.weight", [2, 3, 2, 2])
        file.initializer("unsqueeze_12", [3, 1, 1])
        file.node("ConvTranspose", "node_conv_transpose2d", ["x", "model.mask_decoder.output_upscaling.0.weight"], ["c"])
        file.node("Mul", "node_mul", ["unsqueeze_12", "c"], ["y"])
        let error = try #require(throws: ImportError.self) { try SyntheticONNXTests.importing(file) }
        #expect(error.code == .unmappedTensors && error.unmapped.map(\.name) == ["unsqueeze_12"])
    }

    @Test("an fx_node naming parameters of two modules names neither")
    func twoModulesNameNone() throws {
        var file = ONNXTestFile()
        file.inputs = ["x"]
        file.outputs = ["y"]
        file.initializer("val_5", [2, 2])
        file.node("MatMul", "node_MatMul_5", ["x", "val_5"], ["y"], metadata: [
            "pkg.torch.onnx.fx_node": "aten.linear.default(%x, %p_mask_decoder_transformer_layers_0_self_attn_q_proj_weight, "
                + "%p_mask_decoder_transformer_layers_0_self_attn_k_proj_bias)",
        ])
        let error = try #require(throws: ImportError.self) { try SyntheticONNXTests.importing(file) }
        #expect(error.unmapped.map(\.name) == ["val_5"])
        #expect(error.description.contains("ambiguous between mask_decoder.transformer.layers.0.self_attn.k_proj, "
                                           + "mask_decoder.transformer.layers.0.self_attn.q_proj"), "\(error)")
    }

    @Test("one named LayerNorm weight deduplicated across two modules gives each its copy")
    func deduplicatedInitializer() throws {
        var file = ONNXTestFile()
        file.inputs = ["a", "b"]
        file.outputs = ["y", "z"]
        file.initializer("mask_decoder.transformer.layers.0.norm1.weight", [4], [1, 1, 1, 1])
        file.initializer("mask_decoder.transformer.layers.0.norm1.bias", [4])
        file.initializer("mask_decoder.transformer.layers.0.norm2.bias", [4], [1, 2, 3, 4])
        let norm1 = ["a", "mask_decoder.transformer.layers.0.norm1.weight", "mask_decoder.transformer.layers.0.norm1.bias"]
        let norm2 = ["b", "mask_decoder.transformer.layers.0.norm1.weight", "mask_decoder.transformer.layers.0.norm2.bias"]
        file.node("LayerNormalization", "node_layer_norm", norm1, ["y"], metadata: [
            "pkg.torch.onnx.name_scopes": "['', 'mask_decoder.transformer', 'mask_decoder.transformer.layers.0', 'mask_decoder.transformer.layers.0.norm1', 'layer_norm']",
        ])
        file.node("LayerNormalization", "node_layer_norm_1", norm2, ["z"], metadata: [
            "pkg.torch.onnx.name_scopes": "['', 'mask_decoder.transformer', 'mask_decoder.transformer.layers.0', 'mask_decoder.transformer.layers.0.norm2', 'layer_norm_1']",
        ])
        let weights = try SyntheticONNXTests.importing(file)
        #expect(weights["mask_decoder.transformer.layers.0.norm1.weight"]?.floats() == [1, 1, 1, 1])
        #expect(weights["mask_decoder.transformer.layers.0.norm2.weight"]?.floats() == [1, 1, 1, 1])
        #expect(weights["mask_decoder.transformer.layers.0.norm2.bias"]?.floats() == [1, 2, 3, 4])
    }
}

@Suite("ViT relative positions folded by exporters")
struct GatheredRelativePositionTests {
    /// rel_pos [2s-1, d] gathered for side s: entry (i, j) = rel_pos[i - j + s - 1].
    static func gathered(_ table: [[Float]], side: Int) -> [Float] {
        (0..<side).flatMap { i in (0..<side).flatMap { j in table[i - j + side - 1] } }
    }

    static func graph(_ values: [Float], side: Int, dim: Int, equation: String) -> ONNXTestFile {
        var file = ONNXTestFile()
        file.inputs = ["q"]
        file.outputs = ["rel"]
        file.initializer("index_2", [side, side, dim], values)
        file.node("Einsum", "node_einsum_2", ["q", "index_2"], ["rel"], strings: ["equation": equation],
                  metadata: ["pkg.torch.onnx.name_scopes": "['', 'model', 'model.blocks.1', 'model.blocks.1.attn', 'einsum_2']"])
        return file
    }

    @Test("the rel_h and rel_w Einsums' tables become rel_pos_h and rel_pos_w [2s-1, d]")
    func ungathered() throws {
        let table: [[Float]] = [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]]  // s = 3
        let values = Self.gathered(table, side: 3)
        let heights = try SyntheticONNXTests.importing(Self.graph(values, side: 3, dim: 2, equation: "bhwc,hkc->bhwk"))
        #expect(heights["image_encoder.blocks.1.attn.rel_pos_h"]?.shape == [5, 2])
        #expect(heights["image_encoder.blocks.1.attn.rel_pos_h"]?.floats() == table.flatMap { $0 })
        let widths = try SyntheticONNXTests.importing(Self.graph(values, side: 3, dim: 2, equation: "bhwc,wkc->bhwk"))
        #expect(widths["image_encoder.blocks.1.attn.rel_pos_w"]?.floats() == table.flatMap { $0 })
    }

    @Test("a [s,s,d] table whose entries disagree along a diagonal is not a gather, and says where")
    func notGathered() throws {
        var values = Self.gathered([[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]], side: 3)
        values[(2 * 3 + 1) * 2] = 42  // (2, 1) should equal (1, 0)
        let error = try #require(throws: ImportError.self) {
            try SyntheticONNXTests.importing(Self.graph(values, side: 3, dim: 2, equation: "bhwc,hkc->bhwk"))
        }
        #expect(error.code == .invalidLayout && error.description.contains("(2,1) differs from (1,0)"), "\(error)")
    }

    @Test("only a TinyViT stage's attention takes a constant [H, N, N] as its bias table")
    func attentionBiasTableScope() {
        #expect(ONNXConsumerRules.isTinyViTAttention("image_encoder.layers.1.blocks.0.attn"))
        #expect(!ONNXConsumerRules.isTinyViTAttention("image_encoder.blocks.2.attn"))  // SAM ViT
        #expect(!ONNXConsumerRules.isTinyViTAttention("image_encoder.layers.1.blocks.0.mlp"))
        #expect(!ONNXConsumerRules.isTinyViTAttention("mask_decoder.transformer.layers.0.self_attn"))
    }
}
