import Foundation
import SAMConvert
import SAMFiles
import SAMFormats
import SAMModel
import SAMModelFile
import SAMTensor
import SAMTestSupport
import Testing

/// The image-encoder family seam: configs and model files name their family, and a file whose
/// name and configuration disagree is never built as either.
@Suite("Model families")
struct ModelFamilyTests {
    @Test("a config without a family is TinyViT; a named family decodes as its own config; an unknown one is refused")
    func configFamilies() throws {
        let tiny = try SAMConfig(contentsOf: TestPaths.tinyReferences + "/config.json")
        #expect(tiny.imageEncoder.family == TinyViTFamily.name)
        #expect(tiny.imageEncoder.as(TinyViTConfig.self)?.embedDims == [8, 16, 24, 32])
        let vit = try SAMConfig(contentsOf: TestPaths.vitTinyReferences + "/config.json")
        #expect(vit.imageEncoder.family == ViTFamily.name)
        #expect(vit.imageEncoder.as(ViTConfig.self)?.globalAttentionIndexes == [1, 3])
        #expect(vit.imageEncoder.as(TinyViTConfig.self) == nil)
        // Round trip: the family key is written, the values come back.
        for config in [tiny, vit, .mobileSAM, .sam(.vitH)] {
            let decoded = try JSONDecoder().decode(SAMConfig.self, from: config.jsonData())
            #expect(decoded == config)
        }
        var object = try #require(JSONSerialization.jsonObject(with: vit.jsonData()) as? [String: Any])
        var encoder = try #require(object["imageEncoder"] as? [String: Any])
        #expect(encoder["family"] as? String == "vit")
        encoder["family"] = "hiera_tomorrow"
        object["imageEncoder"] = encoder
        let unknown = try JSONSerialization.data(withJSONObject: object)
        let error = #expect(throws: DecodingError.self) { try JSONDecoder().decode(SAMConfig.self, from: unknown) }
        #expect("\(String(describing: error))".contains("tiny_vit, vit"))
    }

    /// tiny.samw rewritten with its metadata changed by `edit`.
    static func rewritten(_ model: String, as name: String, in folder: String,
                          _ edit: (inout [String: JSONValue]) -> Void) throws -> String {
        let file = try SAMWFile(path: model)
        guard case .object(var metadata) = file.metadata else { throw ConversionFailure("metadata is not an object") }
        edit(&metadata)
        let tensors = try file.tensors().sorted { $0.key < $1.key }.map { (name: $0.key, tensor: $0.value) }
        let path = folder + "/" + name
        try SAMWWriter.write(tensors: tensors, metadata: .object(metadata), to: path)
        return path
    }

    @Test("model files: written ones name family and schema; older ones load; a mismatch or a newer schema is refused")
    func modelFileFamilies() throws {
        let folder = try TestPaths.temporaryFolder("families")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try TestModels.tiny(in: folder)
        let loaded = try ModelFile.load(model)
        // A plain family's file stays at schema 2, which earlier readers load.
        #expect(loaded.metadata.schemaVersion == 2)
        #expect(loaded.metadata.modelFamily == "mobile_sam" && loaded.metadata.imageEncoder == "tiny_vit")

        // As files were written before families: no schema version, no family key in the config.
        let older = try Self.rewritten(model, as: "older.samw", in: folder) { metadata in
            metadata["schemaVersion"] = nil
            if case .object(var config)? = metadata["config"], case .object(var encoder)? = config["imageEncoder"] {
                encoder["family"] = nil
                config["imageEncoder"] = .object(encoder)
                metadata["config"] = .object(config)
            }
        }
        let olderModel = try ModelFile.load(older)
        #expect(olderModel.sam.imageEncoder is TinyViT)

        let mismatched = try Self.rewritten(model, as: "mismatched.samw", in: folder) { $0["imageEncoder"] = .string("vit") }
        #expect(throws: ModelFileError.self) { try ModelFile.load(mismatched) }
        do { _ = try ModelFile.load(mismatched) } catch {
            #expect("\(error)".contains("names image encoder 'vit' but its configuration is 'tiny_vit's"), "\(error)")
        }

        let newer = try Self.rewritten(model, as: "newer.samw", in: folder) { $0["schemaVersion"] = .number(99) }
        do {
            _ = try ModelFile.load(newer)
            Issue.record("a schema newer than the reader's loaded")
        } catch {
            #expect("\(error)".contains("schema version 99 is newer"), "\(error)")
        }
    }

    @Test("a ViT model converts from its state dict, loads as a ViT, and says so")
    func vitModelFile() throws {
        let folder = try TestPaths.temporaryFolder("vit")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var request = ConversionRequest(inputs: [TestPaths.vitTinyReferences + "/sam.h5"], output: folder + "/vit.samw")
        request.configFile = TestPaths.vitTinyReferences + "/config.json"
        _ = try Converter.run(request)
        let loaded = try ModelFile.load(request.output)
        #expect(loaded.metadata.modelFamily == "sam" && loaded.metadata.imageEncoder == "vit")
        #expect(loaded.sam.imageEncoder is ImageEncoderViT)
        // Without a config, the architecture comes from the weights alone.
        var bare = ConversionRequest(inputs: [TestPaths.vitTinyReferences + "/sam.h5"], output: folder + "/bare.samw")
        bare.maxPoints = 100
        _ = try Converter.run(bare)
        #expect(try ModelFile.load(bare.output).metadata.config.imageEncoder == loaded.metadata.config.imageEncoder)
    }
}
