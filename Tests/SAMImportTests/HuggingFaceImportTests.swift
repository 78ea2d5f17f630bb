import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMImport

/// Fixtures/hf_vit_tiny.safetensors: reference_outputs/vit_tiny's weights in a real
/// `transformers.SamModel`, saved with `save_pretrained` (converters/export_hf_sam.py). It must
/// import to exactly the tensors the upstream-named sam.h5 gives.
@Suite("Hugging Face transformers SamModel import")
struct HuggingFaceImportTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/hf_vit_tiny.safetensors").path
    static let h5 = TestPaths.vitTinyReferences + "/sam.h5"
    static let sharedPE = "shared_image_embedding.positional_embedding"
    static let promptPE = "prompt_encoder.shared_embedding.positional_embedding"
    static let canonicalPE = "prompt_encoder.pe_layer.positional_encoding_gaussian_matrix"

    static func stored() throws -> [String: Tensor] { try SafetensorsFile(path: fixture).readAll() }

    @Test("the transformers checkpoint converts to the upstream state dict's tensors, bit for bit")
    func sameTensors() throws {
        let imported = try SAMImporter.importFiles([Self.fixture])
        let reference = try StateDictImport.importHDF5(Self.h5)
        let comparison = WeightComparison(imported, against: reference)
        #expect(comparison.sameKeys && comparison.differing.isEmpty, "\(comparison)")
        #expect(comparison.bitExact.count == reference.tensors.count && reference.tensors.count == 202)
        // Provenance: every tensor names the transformers key it came from and the rule.
        let storedKeys = Set(try Self.stored().keys)
        for (name, tensor) in imported.tensors {
            #expect(tensor.origin.rule == .huggingFaceName, "\(name)")
            #expect(tensor.origin.sources.count == 1 && tensor.origin.sources.allSatisfy(storedKeys.contains), "\(name): \(tensor.origin.sources)")
        }
        #expect(imported.tensors["mask_decoder.output_hypernetworks_mlps.2.layers.2.weight"]?.origin.sources
                == ["mask_decoder.output_hypernetworks_mlps.2.proj_out.weight"])
        #expect(imported.tensors["mask_decoder.transformer.layers.1.norm4.bias"]?.origin.sources
                == ["mask_decoder.transformer.layers.1.layer_norm4.bias"])
        #expect(imported.tensors[Self.canonicalPE]?.origin.sources == [Self.sharedPE])
    }

    @Test("every rule of the table maps a key of the fixture (or the tied alias save_pretrained leaves out)")
    func noDeadRule() throws {
        let keys = Array(try Self.stored().keys) + [Self.promptPE]
        for rule in HuggingFaceSamNames.rules {
            #expect(keys.contains { rule.canonicalName(for: $0, among: keys) != nil }, "\(rule.hf) maps nothing")
        }
    }

    @Test("MLP heads: proj_in, layers.K, proj_out become layers 0, K+1 and the last")
    func mlpShift() {
        let keys = ["mask_decoder.iou_prediction_head.proj_in.weight", "mask_decoder.iou_prediction_head.layers.0.weight",
                    "mask_decoder.iou_prediction_head.layers.1.weight", "mask_decoder.iou_prediction_head.proj_out.bias"]
        let stored = keys + ["vision_encoder.pos_embed"]
        let names = HuggingFaceLayout(keys: stored)?.canonicalNames(for: stored)
        #expect(names?[keys[0]] == "mask_decoder.iou_prediction_head.layers.0.weight")
        #expect(names?[keys[1]] == "mask_decoder.iou_prediction_head.layers.1.weight")
        #expect(names?[keys[2]] == "mask_decoder.iou_prediction_head.layers.2.weight")
        #expect(names?[keys[3]] == "mask_decoder.iou_prediction_head.layers.3.bias")
        #expect(names?["vision_encoder.layers.01.attn.qkv.weight"] == nil)
    }

    @Test("upstream-named state dicts are not taken for transformers ones")
    func upstreamLayoutUntouched() throws {
        let keys = try HDF5File(path: Self.h5).readAll().keys
        #expect(HuggingFaceLayout(keys: keys) == nil)
        #expect(!HuggingFaceLayout.sam.matches(keys))
    }

    @Test("a transformers key no rule maps is an unmapped-tensor error naming the file and the key")
    func unmappedKey() throws {
        var stored = try Self.stored()
        stored["vision_encoder.layers.0.attn.extra_scale"] = Tensor(shape: [4], floats: [1, 2, 3, 4])
        let error = try #require(throws: ImportError.self) {
            try StateDictImport.importTensors(StoredTensors(stored), file: Self.fixture, options: ImportOptions())
        }
        #expect(error.code == .unmappedTensors && error.file == Self.fixture)
        #expect(error.unmapped.map(\.name) == ["vision_encoder.layers.0.attn.extra_scale"])
        #expect(error.description.contains("HuggingFaceSamNames"))
        var options = ImportOptions()
        options.allowUnmapped = true
        let rest = try StateDictImport.importTensors(StoredTensors(stored), file: Self.fixture, options: options)
        #expect(rest.tensors.count == 202 && rest.unmapped.count == 1)
    }

    @Test("the positional matrix held twice (as older checkpoints do) imports once when both copies are equal")
    func tiedCopiesEqual() throws {
        var stored = try Self.stored()
        stored[Self.promptPE] = stored[Self.sharedPE]
        let imported = try StateDictImport.importTensors(StoredTensors(stored), file: Self.fixture, options: ImportOptions())
        #expect(imported.tensors.count == 202)
        #expect(Set(imported.tensors[Self.canonicalPE]?.origin.sources ?? []) == [Self.sharedPE, Self.promptPE])
        // Only the prompt encoder's copy: still the same tensor.
        stored[Self.sharedPE] = nil
        let alone = try StateDictImport.importTensors(StoredTensors(stored), file: Self.fixture, options: ImportOptions())
        #expect(alone.tensors[Self.canonicalPE]?.tensor.isBitwiseEqual(to: try #require(try Self.stored()[Self.sharedPE])) == true)
    }

    @Test("two different copies of the positional matrix are an error naming both keys")
    func tiedCopiesDiffer() throws {
        var stored = try Self.stored()
        let shared = try #require(stored[Self.sharedPE])
        var values = shared.floats()
        values[5] += 0.25
        stored[Self.promptPE] = Tensor(shape: shared.shape, floats: values)
        let error = try #require(throws: ImportError.self) {
            try StateDictImport.importTensors(StoredTensors(stored), file: Self.fixture, options: ImportOptions())
        }
        #expect(error.code == .conflictingTensors && error.file == Self.fixture && error.tensor == Self.canonicalPE)
        #expect(error.message.contains(Self.sharedPE) && error.message.contains(Self.promptPE), "\(error)")
    }
}
