import Foundation
import SAMImport
import SAMTensor
import Testing

/// Rules the committed exports do not all exercise, on small hand-built graphs.
@Suite("Synthetic ONNX rules")
struct SyntheticONNXTests {
    static func importing(_ file: ONNXTestFile, options: ImportOptions = ImportOptions()) throws -> ImportedWeights {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/model.onnx"
        try file.write(to: path)
        return try ONNXImport.importModel(path, options: options)
    }

    @Test("attention-bias table inverted with upstream's offset numbering (window 2)")
    func attentionBiasTable() throws {
        // ref: tiny_vit_sam.py Attention.__init__ for resolution (2, 2): points (0,0) (0,1) (1,0) (1,1).
        let idxs = [0, 1, 2, 3, 1, 0, 3, 2, 2, 3, 0, 1, 3, 2, 1, 0]
        let biases: [[Float]] = [[0.5, -1, 2, 3.25], [7, 8, -9, 10]]
        let table = (0..<2).flatMap { h in idxs.map { biases[h][$0] } }
        var file = ONNXTestFile()
        file.inputs = ["logits"]
        file.outputs = ["y"]
        file.nodes.append(.init(op: "Constant", name: "/layers.1/blocks.0/attn/Constant_2", inputs: [], outputs: ["ab"],
                                value: .init(name: "", shape: [2, 4, 4], values: table)))
        file.node("Add", "/layers.1/blocks.0/attn/Add", ["logits", "ab"], ["y"])
        let weights = try Self.importing(file)
        let recovered = try #require(weights["image_encoder.layers.1.blocks.0.attn.attention_biases"])
        #expect(recovered.shape == [2, 4])
        #expect(recovered.floats() == biases.flatMap { $0 })
    }

    @Test("an initializer deduplicated through Identity names every module it feeds")
    func identityDedup() throws {
        var file = ONNXTestFile()
        file.inputs = ["x"]
        file.outputs = ["y"]
        file.initializer("onnx::Mul_10", [3, 1, 1], [1, 1, 1])
        file.initializer("onnx::Add_11", [3, 1, 1])
        file.initializer("onnx::Add_12", [3, 1, 1], [4, 5, 6])
        file.node("Identity", "Identity_0", ["onnx::Mul_10"], ["onnx::Mul_13"])
        file.node("Mul", "/neck/neck.1/Mul", ["onnx::Mul_10", "x"], ["a"])
        file.node("Add", "/neck/neck.1/Add_1", ["a", "onnx::Add_11"], ["b"])
        file.node("Mul", "/neck/neck.3/Mul", ["onnx::Mul_13", "b"], ["c"])
        file.node("Add", "/neck/neck.3/Add_1", ["c", "onnx::Add_12"], ["y"])
        let weights = try Self.importing(file)
        #expect(weights.names == ["image_encoder.neck.1.bias", "image_encoder.neck.1.weight",
                                  "image_encoder.neck.3.bias", "image_encoder.neck.3.weight"])
        #expect(weights["image_encoder.neck.3.weight"]?.shape == [3])
        #expect(weights["image_encoder.neck.3.bias"]?.floats() == [4, 5, 6])
    }

    @Test("a constant-folded get_dense_pe() [1,C,g,g] flowing into the transformer is the dense PE, not a weight")
    func foldedDensePE() throws {
        var file = ONNXTestFile()
        file.inputs = ["src", "repeats"]
        file.outputs = ["y"]
        file.initializer("onnx::Tile_40", [1, 2, 3, 3])
        file.initializer("onnx::MatMul_41", [2, 2])
        file.node("Tile", "/Tile", ["onnx::Tile_40", "repeats"], ["pos"])
        file.node("Flatten", "/transformer/Flatten", ["pos"], ["flat"])
        file.node("Add", "/transformer/layers.0/Add", ["src", "flat"], ["q"])
        file.node("MatMul", "/transformer/layers.0/self_attn/q_proj/MatMul", ["q", "onnx::MatMul_41"], ["y"])
        let weights = try Self.importing(file)
        let dense = try #require(weights.denseImagePE)
        #expect(dense.origin.rule == .densePEConstant && dense.origin.derivation == .computedByExporter)
        #expect(dense.tensor.shape == [1, 2, 3, 3])
        #expect(weights.facts.imageEmbeddingSize == 3 && weights.facts.embeddingDim == 2)
        #expect(weights.names == ["mask_decoder.transformer.layers.0.self_attn.q_proj.weight"])
    }

    @Test("dynamo scopes from the namespace key alone; Gemm with transB = 0 transposed back")
    func dynamoNamespaceAndGemm() throws {
        var file = ONNXTestFile()
        file.inputs = ["x"]
        file.outputs = ["y"]
        file.initializer("val_3", [2, 3], [1, 2, 3, 4, 5, 6])  // [in, out] for transB = 0
        file.initializer("val_4", [3])
        file.node("Gemm", "node_Gemm_1", ["x", "val_3", "val_4"], ["y"], ints: ["transB": 0],
                  metadata: ["namespace": ": Wrapper/md: MaskDecoder/md.iou_prediction_head: MLP/md.iou_prediction_head.layers.0: Linear/addmm: aten.addmm.default"])
        let weights = try Self.importing(file)
        #expect(weights["mask_decoder.iou_prediction_head.layers.0.weight"]?.shape == [3, 2])
        #expect(weights["mask_decoder.iou_prediction_head.layers.0.weight"]?.floats() == [1, 4, 2, 5, 3, 6])
        #expect(weights["mask_decoder.iou_prediction_head.layers.0.bias"]?.shape == [3])
    }

    @Test("an export that kept BatchNorm (named parameters) is folded like a state dict")
    func keptBatchNorm() throws {
        var file = ONNXTestFile()
        file.inputs = ["x"]
        file.outputs = ["y"]
        file.initializer("model.patch_embed.seq.0.c.weight", [2, 1, 1, 1], [2, -3])
        for (leaf, values) in [("weight", [Float(1), 2]), ("bias", [0.5, 0]), ("running_mean", [1, -1]), ("running_var", [4, 0.25])] {
            file.initializer("model.patch_embed.seq.0.bn.\(leaf)", [2], values)
        }
        file.node("Conv", "node_Conv_0", ["x", "model.patch_embed.seq.0.c.weight"], ["c"])
        file.node("BatchNormalization", "node_BN_0", ["c"] + ["weight", "bias", "running_mean", "running_var"].map { "model.patch_embed.seq.0.bn.\($0)" }, ["y"])
        let weights = try Self.importing(file)
        #expect(weights.names == ["image_encoder.patch_embed.seq.0.c.bias", "image_encoder.patch_embed.seq.0.c.weight"])
        let scale0 = 1 / (4 + 1e-5).squareRoot(), scale1 = 2 / (0.25 + 1e-5).squareRoot()
        #expect(weights["image_encoder.patch_embed.seq.0.c.weight"]?.floats() == [Float(2 * scale0), Float(-3 * scale1)])
        #expect(weights["image_encoder.patch_embed.seq.0.c.bias"]?.floats() == [Float(0.5 - 1 * scale0), Float(0 + 1 * scale1)])
        #expect(weights.tensors["image_encoder.patch_embed.seq.0.c.weight"]?.origin.derivation == .foldedByImporter)
    }
}
