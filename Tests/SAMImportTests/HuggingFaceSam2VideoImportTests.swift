import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMImport

/// Fixtures/hf_sam2_video_tiny/: the committed tiny video set's checkpoint
/// (reference_outputs/sam2_tiny_video/checkpoint.pt) in a real `transformers.Sam2VideoModel`, renamed
/// by transformers' own `replace_keys` and saved with `save_pretrained` (model.safetensors and
/// config.json; converters/export_hf_sam2_video.py, whose report shows every reloaded tensor equal to
/// the upstream one and transformers tracking the set's clip). It must import to exactly the tensors
/// the upstream `.pt` gives, video weights included.
@Suite("Hugging Face transformers Sam2VideoModel import")
struct HuggingFaceSam2VideoImportTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/hf_sam2_video_tiny").path
    static let fixture = folder + "/model.safetensors"
    static let checkpoint = TestPaths.sam2TinyVideoReferences + "/checkpoint.pt"

    static func stored() throws -> [String: Tensor] { try SafetensorsFile(path: fixture).readAll() }

    @Test("the transformers checkpoint converts to every tensor of the upstream checkpoint, video weights included, bit for bit")
    func sameTensors() throws {
        let imported = try SAMImporter.importFiles([Self.fixture])
        let reference = try StateDictImport.importPyTorch(Self.checkpoint)
        let comparison = WeightComparison(imported, against: reference)
        #expect(comparison.sameKeys && comparison.differing.isEmpty, "\(comparison)")
        #expect(comparison.bitExact.count == reference.tensors.count && reference.tensors.count == 328)
        #expect(imported.dropped.isEmpty && imported.unmapped.isEmpty)
        let video = imported.tensors.filter { SAM2Names.videoOnly.contains(String($0.key.prefix { $0 != "." })) }
        #expect(video.count == 65)
        for (name, tensor) in imported.tensors {
            let expected: ImportRule = video[name] != nil ? .huggingFaceSam2VideoName : .huggingFaceSam2Name
            #expect(tensor.origin.rule == expected, "\(name): \(tensor.origin.rule)")
        }
        let sources: [String: String] = [
            "maskmem_tpos_enc": "memory_temporal_positional_encoding",
            "no_mem_pos_enc": "no_memory_positional_encoding",
            "no_obj_ptr": "no_object_pointer",
            "no_obj_embed_spatial": "occlusion_spatial_embedding_parameter",
            "obj_ptr_tpos_proj.weight": "temporal_positional_encoding_projection_layer.weight",
            "obj_ptr_proj.layers.0.weight": "object_pointer_proj.proj_in.weight",
            "obj_ptr_proj.layers.1.bias": "object_pointer_proj.layers.0.bias",
            "obj_ptr_proj.layers.2.weight": "object_pointer_proj.proj_out.weight",
            "memory_attention.layers.0.cross_attn_image.out_proj.weight": "memory_attention.layers.0.cross_attn_image.o_proj.weight",
            "memory_attention.layers.0.norm3.bias": "memory_attention.layers.0.layer_norm3.bias",
            "memory_attention.norm.weight": "memory_attention.layer_norm.weight",
            "memory_encoder.mask_downsampler.encoder.3.weight": "memory_encoder.mask_downsampler.layers.1.conv.weight",
            "memory_encoder.mask_downsampler.encoder.4.bias": "memory_encoder.mask_downsampler.layers.1.layer_norm.bias",
            // The tiny set's downsampler has two steps: its final conv is upstream's entry 6.
            "memory_encoder.mask_downsampler.encoder.6.weight": "memory_encoder.mask_downsampler.final_conv.weight",
            "memory_encoder.pix_feat_proj.weight": "memory_encoder.feature_projection.weight",
            "memory_encoder.fuser.layers.0.gamma": "memory_encoder.memory_fuser.layers.0.scale",
            "memory_encoder.fuser.layers.0.dwconv.weight": "memory_encoder.memory_fuser.layers.0.depthwise_conv.weight",
            "memory_encoder.fuser.layers.0.pwconv2.bias": "memory_encoder.memory_fuser.layers.0.pointwise_conv2.bias",
            "memory_encoder.out_proj.weight": "memory_encoder.projection.weight",
            "mask_downsample.weight": "mask_downsample.weight",
        ]
        for (canonical, key) in sources {
            #expect(imported.tensors[canonical]?.origin.sources == [key], "\(canonical)")
        }
    }

    @Test("every rule of the video table maps a key of the fixture")
    func noDeadRule() throws {
        let keys = Array(try Self.stored().keys)
        for rule in HuggingFaceSam2VideoNames.rules {
            #expect(keys.contains { rule.canonicalName(for: $0, among: keys) != nil }, "\(rule.hf) maps nothing")
        }
    }

    @Test("a four-step downsampler (the published models') maps its steps to entries 0, 1, 3, 4 ... and its final conv to 12")
    func publishedDownsampler() {
        let prefix = "memory_encoder.mask_downsampler."
        let keys = (0..<4).flatMap { ["\(prefix)layers.\($0).conv.weight", "\(prefix)layers.\($0).layer_norm.weight"] }
            + ["\(prefix)final_conv.weight"]
        let names = HuggingFaceSamNames.canonicalNames(for: keys, rules: HuggingFaceSam2VideoNames.rules)
        #expect(names["\(prefix)layers.3.conv.weight"] == "\(prefix)encoder.9.weight")
        #expect(names["\(prefix)layers.3.layer_norm.weight"] == "\(prefix)encoder.10.weight")
        #expect(names["\(prefix)final_conv.weight"] == "\(prefix)encoder.12.weight")
        #expect(Set(names.values).count == keys.count)
    }

    @Test("a canonical weight's transformers key is found again from the table, where one rule gives it")
    func storedNames() throws {
        let imported = try SAMImporter.importFiles([Self.fixture])
        var found = 0
        for (name, tensor) in imported.tensors {
            guard let stored = HuggingFaceStoredNames.storedName(ofCanonical: name, in: imported) else { continue }
            #expect([stored] == tensor.origin.sources, "\(name)")
            found += 1
        }
        // All but 37: the 4 point-embedding rows and the Fourier matrix (two keys each give it), and
        // what a rule could also give through a count of keys: the MLP heads' layers 1 and 2 (28) and
        // the downsampler's entries 3 and 6 (4).
        #expect(found == 328 - 37)
        #expect(HuggingFaceStoredNames.storedName(ofCanonical: "memory_attention.layers.0.cross_attn_image.k_proj.weight", in: imported)
                == "memory_attention.layers.0.cross_attn_image.k_proj.weight")
        #expect(HuggingFaceStoredNames.storedName(ofCanonical: "memory_encoder.mask_downsampler.encoder.4.weight", in: imported)
                == "memory_encoder.mask_downsampler.layers.1.layer_norm.weight")
        let upstream = try StateDictImport.importPyTorch(Self.checkpoint)
        #expect(HuggingFaceStoredNames.storedName(ofCanonical: "maskmem_tpos_enc", in: upstream) == nil)
    }
}
