import Foundation
import SAMConvert
import SAMFormats
import SAMModel
import SAMModelFile
import SAMTensor
import SAMTestSupport
import Testing

/// Tests/SAMImportTests/Fixtures/hf_sam2_video_tiny: the tiny video set's checkpoint as transformers'
/// `Sam2VideoModel.save_pretrained` writes it (model.safetensors and config.json,
/// converters/export_hf_sam2_video.py). The folder converts with its own config.json to the model the
/// upstream `.pt` and the set's config.json give; what does not belong together is refused.
@Suite("Conversion: transformers Sam2VideoModel checkpoints")
struct HuggingFaceVideoConversionTests {
    static let folder = TestPaths.packageRoot + "/Tests/SAMImportTests/Fixtures/hf_sam2_video_tiny"
    static let set = TestPaths.sam2TinyVideoReferences
    static let weights = "model.safetensors"

    static func convert(_ inputs: [String], config: String? = nil) throws -> ConversionResult {
        var request = ConversionRequest(inputs: inputs, output: try temporaryFolder() + "/model.samw")
        request.configFile = config
        return try Converter.run(request)
    }

    /// A copy of the fixture folder with `edit` applied to its tensors and `editConfig` to its config.json.
    static func edited(tensors edit: (inout [String: Tensor]) -> Void = { _ in },
                       config editConfig: (inout [String: Any]) -> Void = { _ in }) throws -> String {
        let copy = try temporaryFolder()
        var tensors = try SafetensorsFile(path: folder + "/" + weights).readAll()
        edit(&tensors)
        try SafetensorsWriter.write(tensors, to: copy + "/" + weights)
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/config.json"))
        var json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        editConfig(&json)
        try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]).write(to: URL(fileURLWithPath: copy + "/config.json"))
        return copy
    }

    /// A conversion that must fail: its message, and that nothing was written.
    static func failure(_ inputs: [String]) throws -> String {
        let output = try temporaryFolder() + "/model.samw"
        let error = #expect(throws: ConversionFailure.self) { try Converter.run(ConversionRequest(inputs: inputs, output: output)) }
        #expect(!FileManager.default.fileExists(atPath: output))
        return error?.message ?? ""
    }

    @Test("the folder converts to the .pt's model: the same configuration and every stored tensor bit for bit")
    func sameModelAsUpstream() throws {
        let fromTransformers = try Self.convert([Self.folder])
        let fromUpstream = try Self.convert([Self.set + "/checkpoint.pt"], config: Self.set + "/config.json")
        // The files differ in their provenance only (which files were read, their hashes), so the
        // model is compared: configuration, components, dtype, every tensor's bits.
        #expect(fromTransformers.metadata.config == fromUpstream.metadata.config)
        #expect(fromTransformers.metadata.components == fromUpstream.metadata.components)
        #expect(fromTransformers.metadata.components.contains(Sam.videoKey))
        #expect(fromTransformers.metadata.weightDType == fromUpstream.metadata.weightDType)
        #expect(fromTransformers.metadata.provenance.sources.map(\.path) == [Self.folder + "/model.safetensors", Self.folder + "/config.json"])
        let ours = fromTransformers.storedTensors, theirs = fromUpstream.storedTensors
        #expect(ours.keys.sorted() == theirs.keys.sorted() && ours.count == 328)
        for (key, tensor) in ours {
            #expect(try theirs[key].map { try tensor.read().isBitwiseEqual(to: $0.read()) } == true, "\(key)")
        }
        // The video section came from transformers' fields: the tiny set's sizes, not the published ones.
        let video = try #require(fromTransformers.metadata.config.videoMode)
        #expect(video.memoryDim == 8 && video.memoryAttentionLayers == 1 && video.memoryAttentionFeedForward == 16)
        #expect(video.maskDownsamplerStride == 4 && video.maskDownsamplerTotalStride == 16 && video.projectTemporalEncodingInPointers)
    }

    @Test("a memory-attention weight missing from the checkpoint is an error naming it (both names) and the file")
    func missingWeight() throws {
        let key = "memory_attention.layers.0.cross_attn_image.o_proj.weight"
        let copy = try Self.edited(tensors: { $0[key] = nil })
        let message = try Self.failure([copy])
        #expect(message.contains("memory_attention.layers.0.cross_attn_image.out_proj.weight") && message.contains(key), "\(message)")
        #expect(message.contains(copy + "/" + Self.weights), "\(message)")
    }

    @Test("a config.json whose video fields disagree with the weights is refused naming the field and the tensor",
          arguments: [
            ("num_maskmem", "5", "memory_temporal_positional_encoding"),
            ("memory_encoder_output_channels", "64", "memory_encoder.projection.weight"),
            ("memory_attention_num_layers", "2", "memory_attention.layers.1.linear1.weight"),
            ("memory_attention_feed_forward_hidden_size", "32", "memory_attention.layers.0.linear1.weight"),
            ("mask_downsampler_stride", "2", "memory_encoder.mask_downsampler.layers.0.conv.weight"),
            ("memory_fuser_intermediate_dim", "128", "memory_encoder.memory_fuser.layers.0.pointwise_conv1.weight"),
            ("enable_temporal_pos_encoding_for_object_pointers", "false", "temporal_positional_encoding_projection_layer.weight"),
            ("enable_occlusion_spatial_embedding", "false", "occlusion_spatial_embedding_parameter"),
          ])
    func disagreeingConfig(field: String, json: String, tensor: String) throws {
        let value = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
        let copy = try Self.edited(config: { $0[field] = value })
        let message = try Self.failure([copy])
        #expect(message.contains(copy + "/config.json") && message.contains("\(field) = "), "\(message)")
        // The tensor under its transformers name, when the file holds it (a missing layer is named canonically).
        let canonical = tensor == "memory_attention.layers.1.linear1.weight"
        #expect(canonical ? message.contains(tensor) : message.contains(tensor + " in " + copy), "\(message)")
    }

    @Test("what the runtime cannot build, and transformers configs of other models, are refused by name")
    func refusedConfigs() throws {
        let relu = try Self.edited(config: { $0["memory_fuser_hidden_act"] = "relu" })
        let message = try Self.failure([relu])
        #expect(message.contains("memory_fuser_hidden_act relu") && message.contains(relu + "/config.json"), "\(message)")
        let grid = try Self.edited(config: { $0["memory_attention_rope_feat_sizes"] = [64, 64] })
        #expect(try Self.failure([grid]).contains("memory_attention_rope_feat_sizes [64, 64]"))
        let sam = try Self.edited(config: { $0["model_type"] = "sam" })
        #expect(try Self.failure([sam]).contains("model_type \"sam\""))
    }

    @Test("a transformers Sam2Model config (image mode) reads the same image configuration")
    func imageModelConfig() throws {
        let copy = try Self.edited(config: { json in
            json["model_type"] = "sam2"
            for key in json.keys where !["model_type", "vision_config", "prompt_encoder_config", "mask_decoder_config"].contains(key) {
                json[key] = nil
            }
        })
        let video = try ExplicitConfiguration(contentsOf: Self.folder + "/config.json").config
        var image = try ExplicitConfiguration(contentsOf: copy + "/config.json").config
        #expect(image.videoMode == nil && !image.hasVideoMode)
        image.videoMode = video.videoMode
        #expect(image == video)
    }
}
