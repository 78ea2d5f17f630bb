import Foundation
import SAMConvert
import SAMFormats
import SAMImport
import SAMModel
import SAMModelFile
import SAMTensor
import SAMTestSupport
import Testing

/// samconvert on the committed tiny SAM 2.1 checkpoint (`reference_outputs/sam2_tiny`): the model
/// loads from its .samw and matches SAM2ImagePredictor's features, the decoder's four masks, and
/// every module PyTorch's hooks saw, in their order.
@Suite("Conversion: SAM 2.1 tiny checkpoint")
struct SAM2ConversionTests {
    static let root = TestPaths.sam2TinyReferences
    /// Measured: features within 4.3e-6, masks within 2.3e-5 (mask 0 is scaled 20x in this set), every
    /// module within 5e-6 at its largest; 1e-4 is samverify's bar.
    static let tolerance: Float = 1e-4

    static func tensor(_ relative: String) throws -> FloatTensor { FloatTensor(try NPY.read(root + "/" + relative)) }

    static func model() throws -> LoadedModel {
        let folder = try TestPaths.temporaryFolder("sam2-tiny")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        return try ModelFile.load(try TestModels.sam2Tiny(in: folder))
    }

    struct DumpKey: Hashable {
        let module: String
        let call: Int
    }

    /// manifest.json rows of one run's dumps: (module, call) -> file, and the modules in order.
    static func dumps(_ rows: [[String: Any]]) -> (files: [DumpKey: String], order: [String]) {
        var files: [DumpKey: String] = [:], order: [String] = []
        for row in rows {
            guard let module = row["module"] as? String, let call = row["call"] as? Int, let file = row["file"] as? String else { continue }
            files[DumpKey(module: module, call: call)] = file
            if !order.contains(module) { order.append(module) }
        }
        return (files, order)
    }

    static func manifest() throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: root + "/manifest.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Compares every observed module output with its dump; returns the worst (module, max abs).
    static func compare(_ observed: [(String, FloatTensor)], with rows: [[String: Any]]) throws -> (String, Float) {
        let (files, order) = dumps(rows)
        var calls: [String: Int] = [:], worst: (String, Float) = ("", 0)
        var seen: [String] = []
        for (path, output) in observed {
            let call = calls[path, default: 0]
            calls[path] = call + 1
            guard let file = files[DumpKey(module: path, call: call)] else { continue }
            if !seen.contains(path) { seen.append(path) }
            let reference = try tensor(file)
            #expect(output.shape == reference.shape, "\(path)#\(call): shape \(output.shape) vs PyTorch \(reference.shape)")
            guard output.shape == reference.shape else { continue }
            let difference = Difference(output.data, reference.data)
            #expect(difference.within(tolerance), "\(path)#\(call): \(difference)")
            if difference.maxAbs >= worst.1 { worst = (path, difference.maxAbs) }
        }
        // Every dumped module is reported natively, and in PyTorch's order.
        #expect(Set(order).subtracting(seen).isEmpty, "not reported natively: \(Set(order).subtracting(seen).sorted())")
        #expect(seen == order.filter(Set(seen).contains))
        return worst
    }

    @Test("the .pt converts: video-only weights left out, the rest SAM 2's model, features within 1e-4")
    func encoder() throws {
        let folder = try TestPaths.temporaryFolder("sam2-convert")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var request = ConversionRequest(inputs: [TestPaths.sam2TinyCheckpoint], output: folder + "/model.samw")
        request.configFile = Self.root + "/config.json"
        let result = try Converter.run(request)
        #expect(result.metadata.modelFamily == "sam2" && result.metadata.imageEncoder == "hiera")
        #expect(result.metadata.components == ["image_encoder", "prompt_encoder", "mask_decoder", "video"])
        #expect(result.imported.unmapped.isEmpty && result.imported.dropped.isEmpty)
        // The video modules are kept (schema 4) and sized from the weights.
        let kept = Set(result.storedTensors.keys.filter(SAM2VideoModules.owns).map { $0.prefix { $0 != "." } })
        #expect(kept == ["memory_attention", "memory_encoder", "obj_ptr_proj", "obj_ptr_tpos_proj", "mask_downsample",
                         "maskmem_tpos_enc", "no_mem_pos_enc", "no_obj_ptr", "no_obj_embed_spatial"])
        #expect(result.metadata.schemaVersion == 4 && result.metadata.config.videoMode?.memoryDim == 8 && result.metadata.config.hasVideoMode)
        #expect(result.storedTensors["no_mem_embed"] != nil && result.storedTensors["mask_decoder.conv_s0.weight"] != nil)

        let model = try ModelFile.load(request.output)
        var observed: [(String, FloatTensor)] = []
        let features = try model.sam.encodeFeatures(try Self.tensor("references/input_image.npy")) { observed.append(($0, $1)) }
        for (map, name) in zip(features.maps, ["image_embed", "high_res_feats_0", "high_res_feats_1"]) {
            let reference = try Self.tensor("references/\(name).npy")
            #expect(map.shape == reference.shape)
            let difference = Difference(map.data, reference.data)
            #expect(difference.within(Self.tolerance), "\(name): \(difference)")
            print("SAM 2.1 tiny \(name): \(difference)")
        }
        let rows = try #require((try Self.manifest()["module_outputs"] as? [String: Any])?["image_encoder"] as? [[String: Any]])
        let worst = try Self.compare(observed, with: rows)
        print("SAM 2.1 tiny encoder: \(observed.count) module outputs, worst \(worst.0) \(worst.1)")

        // The high-res features come from conv_s0/conv_s1 composed with the neck's convs of their level; the
        // observer saw the two run one after the other, as upstream does. They differ in rounding only.
        for (index, name) in ["mask_decoder.conv_s0", "mask_decoder.conv_s1"].enumerated() {
            let unfolded = try #require(observed.last { $0.0 == name }?.1)
            let difference = Difference(features.maps[index + 1].data, unfolded.data)
            let scale = unfolded.data.map(abs).max() ?? 0
            print("SAM 2.1 tiny \(name) folded vs in turn: \(difference), largest value \(scale)")
            #expect(difference.within(scale * 2e-6), "\(name) folded: \(difference)")  // measured ~2e-7 of the largest
        }
        // An observer changes nothing in the features.
        let unobserved = try model.sam.encodeFeatures(try Self.tensor("references/input_image.npy"))
        #expect(unobserved.maps.map(\.data) == features.maps.map(\.data))
    }

    @Test("a neck that fuses level 1 top-down keeps conv_s1 after it: nothing folded, the rest as before")
    func unfoldedHighResolution() throws {
        let folder = try TestPaths.temporaryFolder("sam2-topdown")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var config = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.root + "/config.json")))
                                  as? [String: Any])
        var encoderConfig = try #require(config["imageEncoder"] as? [String: Any])
        encoderConfig["fpnTopDownLevels"] = [1, 2, 3]
        config["imageEncoder"] = encoderConfig
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: folder + "/config.json"))
        var request = ConversionRequest(inputs: [TestPaths.sam2TinyCheckpoint], output: folder + "/model.samw")
        request.configFile = folder + "/config.json"
        _ = try Converter.run(request)
        let model = try ModelFile.load(request.output)
        let published = try Self.model()

        let image = try Self.tensor("references/input_image.npy")
        var observed: [(String, FloatTensor)] = []
        let features = try model.sam.encodeFeatures(image) { observed.append(($0, $1)) }
        let unobserved = try model.sam.encodeFeatures(image)
        #expect(unobserved.maps.map(\.data) == features.maps.map(\.data))
        // Both projections run on the neck's levels, as the observer saw them.
        for (index, name) in ["mask_decoder.conv_s0", "mask_decoder.conv_s1"].enumerated() {
            #expect(observed.last { $0.0 == name }?.1.data == features.maps[index + 1].data, "\(name)")
        }
        // Level 1 now takes level 2 top-down; level 2 and the embedding are what the published layout gives.
        let reference = try published.sam.encodeFeatures(image)
        #expect(features.maps[0].data == reference.maps[0].data)
        #expect(Difference(features.maps[2].data, reference.maps[2].data).maxAbs > 1e-3)
    }

    @Test("the decoder's four masks, IoU and object score match on every case; its modules on the dumped ones")
    func decoder() throws {
        let model = try Self.model()
        let features = try #require(ImageFeatures(maps: try ["image_embed", "high_res_feats_0", "high_res_feats_1"].map {
            try Self.tensor("references/\($0).npy")
        }))
        let cases = try #require(try Self.manifest()["cases"] as? [[String: Any]])
        #expect(cases.count == 9)
        var worst: Float = 0
        for entry in cases {
            let name = try #require(entry["name"] as? String)
            func input(_ file: String) throws -> FloatTensor { try Self.tensor("references/\(name)/onnx_\(file).npy") }
            var points = try input("point_coords"), labels = try input("point_labels")
            let padded = Sam.removeOfficialPaddingPoint(points: &points, labels: &labels)
            #expect(padded)
            let hasMask = try input("has_mask_input").data[0]
            var observed: [(String, FloatTensor)] = []
            let prediction = try model.sam.decode(features: features, points: points, labels: labels, appendPaddingPoint: padded,
                                                  maskInput: try input("mask_input"), hasMaskInput: hasMask) { observed.append(($0, $1)) }
            for (output, file) in [(prediction.masks, "low_res_masks"), (prediction.iou, "iou_predictions"),
                                   (try #require(prediction.objectScoreLogits), "object_score_logits")] {
                let reference = try input(file)
                #expect(output.shape == reference.shape, "\(name) \(file)")
                let difference = Difference(output.data, reference.data)
                #expect(difference.within(Self.tolerance), "\(name) \(file): \(difference)")
                worst = max(worst, difference.maxAbs)
            }
            if let rows = entry["module_outputs"] as? [[String: Any]], !rows.isEmpty {
                _ = try Self.compare(observed, with: rows)
            }
        }
        print("SAM 2.1 tiny decoder: worst output \(worst) over \(cases.count) cases")
    }

    @Test("the configuration read from the checkpoint's shapes keeps config.json's where shapes are silent")
    func inferredConfiguration() throws {
        let imported = try StateDictImport.importPyTorch(TestPaths.sam2TinyCheckpoint)
        let written = try SAMConfig(contentsOf: Self.root + "/config.json")
        let shapes = imported.tensors.mapValues(\.tensor.shape)
        // With the written config as the base (what no shape holds: heads, windows, global blocks), every
        // size read from the shapes agrees with it.
        var inferred = try SAMConfig.inferred(fromShapes: shapes, imageSize: 96, base: written)
        // config.json is image mode's; the video section comes from the weights alone.
        #expect(inferred.videoMode?.memoryDim == 8 && inferred.videoMode?.memoryAttentionLayers == 1 && inferred.videoMode?.maskDownsamplerTotalStride == 4)
        inferred.videoMode = nil
        #expect(inferred == written, "\(inferred.imageEncoder.summary) vs \(written.imageEncoder.summary)")
        // Without one, the shapes alone make a SAM 2 model of the same widths and stages.
        let alone = try SAMConfig.inferred(fromShapes: shapes, imageSize: 96)
        let hiera = try #require(alone.imageEncoder.as(HieraConfig.self))
        #expect(hiera.stages == [1, 2, 3, 2] && hiera.embedDim == 8 && hiera.neckDim == 16 && hiera.positionEmbeddingSize == [5, 5])
        #expect(hiera.windowSpec[0] == 8)
        #expect(alone.maskDecoder.mlpDim == 32 && alone.maskDecoder.familyOptions[SAM2DecoderOptions.self]?.objectScoreHead == .mlp)
        #expect(alone.promptEncoder.imageEmbeddingSize == 6 && alone.promptEncoder.embedDim == 16)
    }

    @Test("an encoder-only or decoder-only part of the state dict loads on its own")
    func partialModels() throws {
        let imported = try StateDictImport.importPyTorch(TestPaths.sam2TinyCheckpoint)
        let config = try SAMConfig(contentsOf: Self.root + "/config.json")
        let encoderKeys = imported.canonicalTensors.filter {
            $0.key.hasPrefix("image_encoder.") || $0.key.hasPrefix("mask_decoder.conv_s") || $0.key == "no_mem_embed"
        }
        // The high-resolution projections live under mask_decoder but make no decoder.
        let encoderOnly = try Sam(weights: WeightStore(encoderKeys, source: "encoder part"), config: config)
        #expect(encoderOnly.imageEncoder != nil && encoderOnly.maskDecoder == nil && encoderOnly.promptEncoder == nil)
        let decoderOnly = try Sam(weights: WeightStore(imported.canonicalTensors.filter { !encoderKeys.keys.contains($0.key) },
                                                       source: "decoder part"), config: config)
        #expect(decoderOnly.imageEncoder == nil && decoderOnly.maskDecoder != nil && decoderOnly.video != nil)
    }

    /// The same state dict as the other formats people hold SAM 2 in (converters/make_checkpoint_fixtures.py
    /// --sam2): upstream's keys, no `{"model": ...}` wrapper. Every format must give the same canonical
    /// tensors, bit for bit, video mode's weights included.
    @Test("the checkpoint's state dict as safetensors or HDF5 imports to the same tensors, bit for bit",
          arguments: ["tiny_sam2.safetensors", "tiny_sam2.h5"])
    func otherStateDictFormats(file: String) throws {
        let fromCheckpoint = try StateDictImport.importPyTorch(TestPaths.sam2TinyCheckpoint)
        let path = TestPaths.packageRoot + "/Tests/SAMImportTests/Fixtures/" + file
        let other = file.hasSuffix(".h5") ? try StateDictImport.importHDF5(path) : try StateDictImport.importSafetensors(path)
        let expected = fromCheckpoint.canonicalTensors, actual = other.canonicalTensors
        #expect(actual.keys.sorted() == expected.keys.sorted())
        for (name, tensor) in expected {
            let mine = try #require(actual[name], "\(file) lacks \(name)")
            #expect(mine.dtype == tensor.dtype && mine.shape == tensor.shape && mine.storage.bytes.elementsEqual(tensor.storage.bytes),
                    "\(file): \(name) differs")
        }
        #expect(other.dropped.isEmpty && fromCheckpoint.dropped.isEmpty && actual.keys.contains("memory_attention.norm.weight"))
    }

    /// samexporter's encoder.onnx alone holds `mask_decoder.conv_s0`/`conv_s1` and `no_mem_embed`, which
    /// the image encoder runs in image mode: the file is an encoder-only model and loads as one.
    @Test("samexporter's encoder alone converts to an encoder-only model that loads")
    func encoderOnlyExport() throws {
        let folder = try TestPaths.temporaryFolder("sam2-encoder-only")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var request = ConversionRequest(inputs: [Self.root + "/encoder.onnx"], output: folder + "/encoder.samw")
        request.configFile = Self.root + "/config.json"
        _ = try Converter.run(request)
        let loaded = try ModelFile.load(request.output)
        #expect(loaded.metadata.components == [Sam.imageEncoderKey])
        #expect(loaded.file.names.contains { $0.hasPrefix("mask_decoder.conv_s0.") })
        #expect(loaded.sam.imageEncoder != nil && loaded.sam.maskDecoder == nil && loaded.sam.promptEncoder == nil)
    }

    @Test("samconvert says which SAM 2 heads and video modules the model has")
    func commandLineSummary() throws {
        let folder = try TestPaths.temporaryFolder("sam2-cli")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let tool = CommandLineTool("samconvert")
        let checkpoint = try tool.run([TestPaths.sam2TinyCheckpoint, "--config", Self.root + "/config.json", "--out", folder + "/a.samw"])
        #expect(checkpoint.status == 0, "\(checkpoint.stderr)")
        #expect(checkpoint.stdout.contains("video: memory attention 1 layers, memory width 8, 7 memories"), "\(checkpoint.stdout)")
        #expect(!checkpoint.stdout.contains("left out"), "\(checkpoint.stdout)")
        #expect(checkpoint.stdout.contains("object-score head mlp"))
        let pair = try tool.run([Self.root + "/encoder.onnx", Self.root + "/decoder.onnx", "--config", Self.root + "/config.json",
                                 "--out", folder + "/b.samw"])
        #expect(pair.status == 0, "\(pair.stderr)")
        #expect(pair.stdout.contains("object-score head not in the weights"), "\(pair.stdout)")
    }

    /// PyTorch's own `_get_pos_embed` output (the module dumps hold it) stands in for what a dynamo
    /// export folds: the model runs from it alone, and beside pos_embed/pos_embed_window it must agree.
    @Test("a folded position embedding replaces pos_embed and pos_embed_window, and must agree with them")
    func foldedPositionEmbedding() throws {
        let imported = try StateDictImport.importPyTorch(TestPaths.sam2TinyCheckpoint)
        let config = try SAMConfig(contentsOf: Self.root + "/config.json")
        let pytorch = try NPY.read(Self.root + "/references/modules/image_encoder.trunk:pos_embed.npy")
        #expect(pytorch.shape == [1, 24, 24, 8])
        var tensors = imported.canonicalTensors
        tensors[SAM2Names.foldedPositionEmbedding] = pytorch
        // Beside the parameters: checked (float64 resize vs torch's float32: within 1e-5), then computed.
        _ = try Sam(weights: WeightStore(tensors, source: "both"), config: config)
        // Alone: used as it is.
        tensors["image_encoder.trunk.pos_embed"] = nil
        tensors["image_encoder.trunk.pos_embed_window"] = nil
        let folded = try Sam(weights: WeightStore(tensors, source: "folded"), config: config)
        let features = try folded.encodeFeatures(try Self.tensor("references/input_image.npy"))
        let difference = Difference(features.embedding.data, try Self.tensor("references/image_embed.npy").data)
        #expect(difference.within(Self.tolerance), "\(difference)")
        // One that disagrees with the parameters is refused, naming it.
        var values = pytorch.floats()
        values[5] += 0.01
        var both = imported.canonicalTensors
        both[SAM2Names.foldedPositionEmbedding] = Tensor(shape: pytorch.shape, floats: values)
        #expect(throws: WeightError.self) { _ = try Sam(weights: WeightStore(both, source: "disagreeing"), config: config) }
    }
}
