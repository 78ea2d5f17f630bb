import Foundation
import SAMConvert
import SAMFiles
import SAMFormats
import SAMModel
import SAMModelFile
import SAMTensor
import SAMTestSupport
import Testing

/// The model-family seam: a family is chosen by how well the weights fit it or by name, never by
/// falling back to another's; configs and model files name a family that is not its encoder's plain one.
@Suite("Model family seam")
struct ModelFamilySeamTests {
    @Test("the registry: each plain family for its encoder, SAM-HQ on SAM's ViT and on TinyViT")
    func registry() {
        #expect(ModelFamilies.names == ["mobile_sam", "sam", "sam2", "sam_hq", "efficientvit_sam"])
        #expect(ModelFamilies.plain(encoderFamily: "tiny_vit")?.name == "mobile_sam")
        #expect(ModelFamilies.plain(encoderFamily: "vit")?.name == "sam")
        #expect(ModelFamilies.plain(encoderFamily: "hiera")?.name == "sam2")
        #expect(ModelFamilies.plain(encoderFamily: "efficientvit")?.name == "efficientvit_sam")
        #expect(ModelFamilies.named("sam_hq")?.imageEncoderFamilies.map { $0.name } == ["vit", "tiny_vit"])
    }

    @Test("weights are given the family they fit best; SAM-HQ's own modules outweigh plain SAM; no fit is an error")
    func bestFit() throws {
        let plain: Set<String> = ["mask_decoder.iou_token.weight", "image_encoder.blocks.0.attn.qkv.weight"]
        #expect(try ModelFamilies.bestFit(keys: plain, encoderFamily: "vit").get().name == "sam")
        #expect(try ModelFamilies.bestFit(keys: plain, encoderFamily: "tiny_vit").get().name == "mobile_sam")
        let hq = plain.union(["mask_decoder.hf_token.weight", "mask_decoder.compress_vit_feat.0.weight"])
        #expect(try ModelFamilies.bestFit(keys: hq, encoderFamily: "vit").get().name == "sam_hq")
        #expect(try ModelFamilies.bestFit(keys: hq, encoderFamily: "tiny_vit").get().name == "sam_hq")
        // SAM-HQ runs no Hiera: SAM 2 is the only family that does.
        #expect(try ModelFamilies.bestFit(keys: hq, encoderFamily: "hiera").get().name == "sam2")
        let none = ModelFamilies.bestFit(keys: plain, encoderFamily: "no_such_encoder")
        guard case .failure(let error) = none else { Issue.record("an unknown encoder family got a model family"); return }
        #expect(error.candidates.isEmpty && "\(error)".contains("known: mobile_sam, sam, sam2, sam_hq, efficientvit_sam"), "\(error)")
        // Two families that add the same modules to SAM's ViT: neither is taken.
        let tie = ModelFamilies.bestFit(keys: hq, encoderFamily: "vit", among: ModelFamilies.all + [SameModulesAsSAMHQ.self])
        guard case .failure(let tied) = tie else { Issue.record("a tie chose a family"); return }
        #expect(tied.candidates == ["sam_hq", "same_modules_as_sam_hq"])
        #expect("\(tied)".contains("fit model families sam_hq, same_modules_as_sam_hq equally well"), "\(tied)")
    }

    /// A family claiming exactly SAM-HQ's modules, for the tie.
    enum SameModulesAsSAMHQ: ModelFamily {
        static let name = "same_modules_as_sam_hq"
        static let imageEncoderFamilies: [any ImageEncoderFamily.Type] = [ViTFamily.self]
        static let maskDecoderFamily: any MaskDecoderFamily.Type = SAMHQMaskDecoderFamily.self
        static let distinguishingKeys = SAMHQModelFamily.distinguishingKeys
    }

    @Test("a SAM-HQ checkpoint without a config is read as SAM-HQ, a SAM one as SAM")
    func inference() throws {
        let hq = try SAMConfig.inferred(fromShapes: Self.shapes(TestPaths.samHQViTTinyReferences + "/sam_hq.h5"))
        #expect(hq.modelFamily == "sam_hq" && hq.modelFamilyName == "sam_hq" && hq.imageEncoder.family == "vit")
        let light = try SAMConfig.inferred(fromShapes: Self.shapes(TestPaths.samHQTinyViTTinyReferences + "/sam_hq.h5"))
        #expect(light.modelFamily == "sam_hq" && light.imageEncoder.family == "tiny_vit")
        let sam = try SAMConfig.inferred(fromShapes: Self.shapes(TestPaths.vitTinyReferences + "/sam.h5"))
        #expect(sam.modelFamily == "sam" && sam.modelFamilyName == nil)
    }

    @Test("image-encoder weights no family reads are an error naming one of them, not MobileSAM's defaults")
    func unknownEncoder() throws {
        let shapes: [String: [Int]] = ["image_encoder.stem.conv.weight": [16, 3, 3, 3], "mask_decoder.iou_token.weight": [1, 256]]
        do {
            _ = try SAMConfig.inferred(fromShapes: shapes)
            Issue.record("unknown encoder weights were given a family")
        } catch {
            #expect(error.ofImageEncoder && error.candidates.isEmpty)
            #expect("\(error)".contains("no image-encoder family reads these weights (image_encoder.stem.conv.weight among them; known: tiny_vit, vit, hiera, efficientvit)"),
                    "\(error)")
        }
        // Weights without an encoder (a decoder-only export) keep the base's encoder, as before.
        let decoderOnly = try SAMConfig.inferred(fromShapes: ["mask_decoder.iou_token.weight": [1, 256]])
        #expect(decoderOnly.modelFamily == "mobile_sam")
    }

    @Test("a config names its model family only when it is not the encoder's plain one; a wrong one is refused")
    func configFamily() throws {
        let hq = try SAMConfig(contentsOf: TestPaths.samHQViTTinyReferences + "/config.json")
        #expect(hq.modelFamily == "sam_hq")
        #expect(hq.featureNames == ["image_embeddings", "vit_features"])
        #expect(hq.featureShapes == [[1, 32, 8, 8], [1, 32, 8, 8]])
        let json = String(decoding: hq.jsonData(), as: UTF8.self)
        #expect(json.contains("\"modelFamily\":\"sam_hq\""))
        // The plain families' configurations keep the bytes they had: no modelFamily key.
        #expect(!String(decoding: SAMConfig.sam(.vitB).jsonData(), as: UTF8.self).contains("modelFamily"))
        var plain = hq
        plain.modelFamily = "sam"
        #expect(plain.modelFamilyName == nil && plain.featureNames == ["image_embeddings"])

        var unknown = hq
        unknown.modelFamilyName = "sam_hq_tomorrow"
        #expect(unknown.problems.contains { $0.contains("unknown model family 'sam_hq_tomorrow' (known: mobile_sam, sam, sam2, sam_hq, efficientvit_sam)") })
        var mismatched = SAMConfig.sam2(.tiny)
        mismatched.modelFamilyName = "sam_hq"
        #expect(mismatched.problems.contains { $0.contains("model family sam_hq runs no image encoder of family 'hiera' (it runs vit, tiny_vit)") },
                "\(mismatched.problems)")
    }

    /// SAM 2's decoder options belong to its family: stored under the key "sam2" as before, read back
    /// through the family's type, and compared as part of the configuration.
    @Test("a family's decoder options: same JSON as before, equal only when their values are")
    func familyDecoderOptions() throws {
        let config = try SAMConfig(contentsOf: TestPaths.sam2TinyReferences + "/config.json")
        let options = try #require(config.maskDecoder.familyOptions[SAM2DecoderOptions.self])
        #expect(options == SAM2DecoderOptions() && ModelFamilies.named("sam2")?.maskDecoderOptions.first?.key == "sam2")
        // The decoder's JSON: the shared keys and the family's object, as the file has them.
        let written = try JSONSerialization.jsonObject(with: config.jsonData()) as? [String: Any]
        let original = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: TestPaths.sam2TinyReferences + "/config.json"))) as? [String: Any]
        let writtenDecoder = try #require(written?["maskDecoder"] as? NSDictionary), originalDecoder = try #require(original?["maskDecoder"] as? NSDictionary)
        #expect(writtenDecoder == originalDecoder)
        #expect(try JSONDecoder().decode(SAMConfig.self, from: config.jsonData()) == config)

        var changed = config
        changed.maskDecoder.familyOptions[SAM2DecoderOptions.self]?.objectScoreHead = .linear
        #expect(changed != config)
        changed.maskDecoder.familyOptions[SAM2DecoderOptions.self] = nil
        #expect(changed != config && changed.maskDecoder.familyOptions.isEmpty)
        #expect(!String(decoding: changed.jsonData(), as: UTF8.self).contains("\"sam2\":{"))
        // SAM's decoder has none, and its JSON has no family key.
        #expect(SAMConfig.sam(.vitB).maskDecoder.familyOptions.isEmpty)
    }

    /// A decoder-only export has no encoder to tell its family by: the family's own keys start
    /// inference from its configuration, not MobileSAM's.
    @Test("weights with a family's own keys and no encoder start from that family's configuration")
    func inferenceBaseByKeys() throws {
        let sam2Decoder: [String: [Int]] = ["mask_decoder.obj_score_token.weight": [1, 256], "mask_decoder.iou_token.weight": [1, 256],
                                            "mask_decoder.mask_tokens.weight": [4, 256]]
        var base = SAMConfig.mobileSAM
        base.maxPoints = 7
        let inferred = try SAMConfig.inferred(fromShapes: sam2Decoder, base: base)
        #expect(inferred.imageEncoder.family == "hiera" && inferred.modelFamily == "sam2" && inferred.maxPoints == 7)
        #expect(inferred.maskDecoder.familyOptions[SAM2DecoderOptions.self]?.objectScoreHead == .mlp)
        let samDecoder = sam2Decoder.filter { $0.key != "mask_decoder.obj_score_token.weight" }
        #expect(try SAMConfig.inferred(fromShapes: samDecoder, base: base).imageEncoder.family == "tiny_vit")
    }

    @Test("a model file whose metadata and configuration name different model families is refused")
    func modelFileFamily() throws {
        let folder = try TestPaths.temporaryFolder("family-seam")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var request = ConversionRequest(inputs: [TestPaths.samHQViTTinyReferences + "/sam_hq.pth"], output: folder + "/hq.samw")
        request.configFile = TestPaths.samHQViTTinyReferences + "/config.json"
        _ = try Converter.run(request)
        let renamed = try ModelFamilyTests.rewritten(request.output, as: "renamed.samw", in: folder) { $0["modelFamily"] = .string("sam") }
        do {
            _ = try ModelFile.load(renamed)
            Issue.record("a file naming another model family than its configuration loaded")
        } catch {
            #expect("\(error)".contains("names model family 'sam' but its configuration is 'sam_hq's"), "\(error)")
        }
    }

    static func shapes(_ h5: String) throws -> [String: [Int]] {
        try HDF5File(path: h5).readAll().mapValues(\.shape)
    }
}
