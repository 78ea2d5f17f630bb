import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMImport

/// Fixtures/hf_sam2_tiny.safetensors: the committed tiny SAM 2.1 checkpoint in a real
/// `transformers.Sam2Model`, saved with `save_pretrained` (converters/export_hf_sam2.py, whose
/// report shows transformers running it to the upstream predictor's outputs). It must import to
/// exactly the image-mode tensors the upstream `.pt` gives (Sam2Model holds no video weights).
@Suite("Hugging Face transformers Sam2Model import")
struct HuggingFaceSam2ImportTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/hf_sam2_tiny.safetensors").path
    static let pointTable = "prompt_encoder.point_embed.weight"

    static func stored() throws -> [String: Tensor] { try SafetensorsFile(path: fixture).readAll() }

    @Test("the transformers checkpoint converts to the upstream checkpoint's image-mode tensors, bit for bit")
    func sameTensors() throws {
        let imported = try SAMImporter.importFiles([Self.fixture])
        var reference = try StateDictImport.importPyTorch(TestPaths.sam2TinyCheckpoint)
        // The upstream checkpoint keeps its video weights; Sam2Model holds none: compare image mode's.
        let video = reference.tensors.keys.filter { SAM2Names.videoOnly.contains(String($0.prefix { $0 != "." })) }
        #expect(video.count == 65)
        for name in video { reference.tensors[name] = nil }
        let comparison = WeightComparison(imported, against: reference)
        #expect(comparison.sameKeys && comparison.differing.isEmpty, "\(comparison)")
        #expect(comparison.bitExact.count == reference.tensors.count && reference.tensors.count == 263)
        #expect(reference.dropped.isEmpty && imported.dropped.isEmpty)
        let storedKeys = Set(try Self.stored().keys)
        for (name, tensor) in imported.tensors {
            #expect(tensor.origin.rule == .huggingFaceSam2Name, "\(name)")
            #expect(tensor.origin.sources.allSatisfy(storedKeys.contains), "\(name): \(tensor.origin.sources)")
        }
        #expect(imported.tensors["mask_decoder.pred_obj_score_head.layers.2.weight"]?.origin.sources
                == ["mask_decoder.pred_obj_score_head.proj_out.weight"])
        #expect(imported.tensors["mask_decoder.transformer.layers.1.cross_attn_image_to_token.out_proj.bias"]?.origin.sources
                == ["mask_decoder.transformer.layers.1.cross_attn_image_to_token.o_proj.bias"])
        #expect(imported.tensors["image_encoder.neck.convs.3.conv.weight"]?.origin.sources
                == ["vision_encoder.neck.convs.3.weight"])
        #expect(imported.tensors["no_mem_embed"]?.origin.sources == ["no_memory_embedding"])
        for row in 0..<4 {
            #expect(imported.tensors["prompt_encoder.point_embeddings.\(row).weight"]?.origin.sources == [Self.pointTable])
        }
    }

    @Test("every image-mode rule of the table maps a key of the fixture")
    func noDeadRule() throws {
        let keys = Array(try Self.stored().keys)
        for rule in HuggingFaceSam2Names.imageRules {
            #expect(keys.contains { rule.canonicalName(for: $0, among: keys) != nil }, "\(rule.hf) maps nothing")
        }
    }

    @Test("SAM 2 keys are told from SAM's; upstream-named SAM 2 checkpoints are neither")
    func layouts() throws {
        #expect(HuggingFaceLayout(keys: try Self.stored().keys) == .sam2)
        let samKeys = try SafetensorsFile(path: URL(fileURLWithPath: Self.fixture).deletingLastPathComponent()
            .appendingPathComponent("hf_vit_tiny.safetensors").path).readAll().keys
        #expect(HuggingFaceLayout(keys: samKeys) == .sam)
        let upstream = try PyTorchCheckpoint(path: TestPaths.sam2TinyCheckpoint).readAll().keys
        #expect(HuggingFaceLayout(keys: upstream) == nil)
    }

    @Test("Sam2VideoModel's video weights beside Sam2Model's are renamed to upstream's, not left out")
    func videoWeightsRenamed() throws {
        var stored = try Self.stored()
        let extra = ["memory_attention.layers.0.self_attn.q_proj.weight": "memory_attention.layers.0.self_attn.q_proj.weight",
                     "memory_encoder.projection.weight": "memory_encoder.out_proj.weight",
                     "object_pointer_proj.proj_in.weight": "obj_ptr_proj.layers.0.weight", "no_object_pointer": "no_obj_ptr",
                     "mask_downsample.weight": "mask_downsample.weight", "memory_temporal_positional_encoding": "maskmem_tpos_enc"]
        for key in extra.keys { stored[key] = Tensor(shape: [2, 2], floats: [1, 2, 3, 4]) }
        let imported = try StateDictImport.importTensors(StoredTensors(stored), file: Self.fixture, options: ImportOptions())
        #expect(imported.tensors.count == 263 + extra.count && imported.unmapped.isEmpty && imported.dropped.isEmpty)
        for (key, canonical) in extra {
            #expect(imported.tensors[canonical]?.origin.sources == [key] && imported.tensors[canonical]?.origin.rule == .huggingFaceSam2VideoName,
                    "\(key)")
        }
    }

    @Test("a transformers key no rule maps is an unmapped-tensor error naming the file, the key and the table")
    func unmappedKey() throws {
        var stored = try Self.stored()
        stored["vision_encoder.backbone.blocks.0.attn.extra_scale"] = Tensor(shape: [4], floats: [1, 2, 3, 4])
        let error = try #require(throws: ImportError.self) {
            try StateDictImport.importTensors(StoredTensors(stored), file: Self.fixture, options: ImportOptions())
        }
        #expect(error.code == .unmappedTensors && error.file == Self.fixture)
        #expect(error.unmapped.map(\.name) == ["vision_encoder.backbone.blocks.0.attn.extra_scale"])
        #expect(error.description.contains("HuggingFaceSam2Names"), "\(error)")
    }

    @Test("the point-embedding table must be [rows, channels]; its rows become the four point embeddings")
    func pointTableRows() throws {
        var stored = try Self.stored()
        let table = try #require(stored[Self.pointTable])
        #expect(table.shape == [4, 16])
        let imported = try StateDictImport.importTensors(StoredTensors(stored), file: Self.fixture, options: ImportOptions())
        let values = table.floats()
        for row in 0..<4 {
            let tensor = try #require(imported.tensors["prompt_encoder.point_embeddings.\(row).weight"]?.tensor)
            #expect(tensor.shape == [1, 16] && tensor.floats() == Array(values[(row * 16)..<((row + 1) * 16)]))
        }
        stored[Self.pointTable] = Tensor(shape: [64], floats: values)
        let error = try #require(throws: ImportError.self) {
            try StateDictImport.importTensors(StoredTensors(stored), file: Self.fixture, options: ImportOptions())
        }
        #expect(error.code == .invalidLayout && error.file == Self.fixture && error.tensor == Self.pointTable, "\(error)")
        stored[Self.pointTable] = try Tensor(dtype: .int64, shape: [4, 16], storage: TensorStorage(zeroedByteCount: 4 * 16 * 8))
        let integers = try #require(throws: ImportError.self) {
            try StateDictImport.importTensors(StoredTensors(stored), file: Self.fixture, options: ImportOptions())
        }
        #expect(integers.code == .wrongElementType && integers.tensor == Self.pointTable, "\(integers)")
    }

    @Test("the two random-Fourier matrices must agree: upstream has one")
    func positionalCopiesDiffer() throws {
        var stored = try Self.stored()
        let shared = try #require(stored["shared_image_embedding.positional_embedding"])
        var values = shared.floats()
        values[3] += 0.5
        stored["shared_image_embedding.positional_embedding"] = Tensor(shape: shared.shape, floats: values)
        let error = try #require(throws: ImportError.self) {
            try StateDictImport.importTensors(StoredTensors(stored), file: Self.fixture, options: ImportOptions())
        }
        #expect(error.code == .conflictingTensors && error.tensor == "prompt_encoder.pe_layer.positional_encoding_gaussian_matrix")
    }
}
