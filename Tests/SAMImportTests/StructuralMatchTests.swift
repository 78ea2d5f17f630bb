import Foundation
import SAMFormats
import SAMImport
import SAMTestSupport
import Testing

/// reference_outputs/tiny/anonymous (converters/make_anonymous_fixtures.py): tiny MobileSAM and SAM ViT exports
/// with every initializer and value renamed, node names and metadata removed, some re-sorted into
/// another topological order: nothing but the structure says which weight is which. The `renamed`
/// files have only their initializers renamed: node scopes say most, the structure the rest.
@Suite("Structural match")
struct StructuralMatchTests {
    static let root = TestPaths.tinyReferences + "/anonymous"

    struct AnonymousFile: CustomTestStringConvertible, Sendable {
        let path: String
        let components: Set<SAMComponent>
        /// The committed state dict holding the same weights, under reference_outputs.
        let stateDict: String
        /// Only the initializers were renamed: node names and metadata still give most scopes.
        let initializersOnly: Bool
        var testDescription: String { path }
    }

    static let files: [AnonymousFile] = {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: root + "/manifest.json")),
              let manifest = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let files = manifest["files"] as? [String: [String: Any]] else { return [] }
        return files.keys.sorted().filter { files[$0]?["edit"] == nil }.map { path in
            let components = (files[path]?["components"] as? [String] ?? []).compactMap(SAMComponent.init(rawValue:))
            return AnonymousFile(path: path, components: Set(components), stateDict: files[path]?["state_dict"] as? String ?? "",
                                 initializersOnly: files[path]?["initializers_only"] as? Bool ?? false)
        }
    }()

    @Test("the fixtures cover both exporters, both LayerNorm forms, re-sorted graphs and the split pair")
    func coverage() {
        let names = Self.files.map(\.path)
        #expect(names.count == 18, "\(names)")
        for part in ["torchscript-opset14", "torchscript-opset17", "dynamo", "onnxslim", "shuffled", "PromptEncoder", "MaskDecoder",
                     "ImageEncoder", "vit-"] {
            #expect(names.contains { $0.contains(part) }, "no fixture with \(part)")
        }
    }

    static let stateDicts: [String: ImportedWeights] = {
        var loaded: [String: ImportedWeights] = [:]
        for path in Set(files.map(\.stateDict)) {
            loaded[path] = try? StateDictImport.importHDF5(TestPaths.packageRoot + "/reference_outputs/" + path)
        }
        return loaded
    }()

    /// Bit for bit, except where the exporter folded BatchNorm into a TinyViT convolution (1e-6, as
    /// for the named exports).
    @Test("each anonymous export gives the state dict's tensors", arguments: files)
    func matchesStateDict(_ file: AnonymousFile) throws {
        let imported = try ONNXImport.importModel(Self.root + "/" + file.path)
        let reference = try #require(Self.stateDicts[file.stateDict], "\(file.stateDict)")
        let comparison = WeightComparison(imported, against: reference, components: file.components) {
            // The split PromptEncoder takes no mask input: it holds no mask_downscaling.
            !(file.path.hasSuffix("PromptEncoder.onnx") && $0.hasPrefix("prompt_encoder.mask_downscaling."))
        }
        comparison.expectMatches()
        // Nothing was named by a stored name; modules were found by structure.
        let byName = imported.names.filter { [.exportedName, .namedLinearWeightTransposed].contains(imported.tensors[$0]?.origin.rule) }
        #expect(byName.isEmpty, "\(byName)")
        let byStructure = imported.names.filter { imported.tensors[$0]?.origin.namedBy?.contains("module order") == true }
        if file.initializersOnly {
            // Node scopes name what they can; the structure fills the root scope (TorchScript's
            // official decoder's point embeddings), never against a node scope.
            if file.path.hasPrefix("torchscript"), file.components.contains(.promptEncoder) {
                #expect(byStructure.contains("prompt_encoder.point_embeddings.0.weight"), "\(byStructure)")
            }
        } else {
            #expect(!byStructure.isEmpty)
        }
    }

    @Test("two modules that fit one place: refused, both listed")
    func ambiguity() throws {
        let path = Self.root + "/ambiguous-labels.onnx"
        let error = try #require(throws: ImportError.self) { try ONNXImport.importModel(path) }
        #expect(error.code == .unmappedTensors)
        #expect(error.file == path)
        let text = error.description
        #expect(text.contains("prompt_encoder.point_embeddings.1"), "\(text)")
        #expect(text.contains("2 fit"), "\(text)")
        // Both candidates' stored tensors are named.
        let listed = text.components(separatedBy: "reading ").dropFirst().compactMap { $0.split(separator: " ").first }
        #expect(Set(listed).count == 2, "\(text)")
    }

    @Test("a LayerNorm2d whose multiply an optimiser removed: its bias matched, its weight missing")
    func droppedNormMultiply() throws {
        let imported = try ONNXImport.importModel(Self.root + "/dropped-norm-multiply.onnx")
        let comparison = WeightComparison(imported, against: TinyImportTests.stateDict, components: [.promptEncoder, .maskDecoder])
        #expect(comparison.onlyInReference == ["prompt_encoder.mask_downscaling.1.weight"], "\(comparison)")
        #expect(comparison.onlyInCandidate.isEmpty && comparison.differing.isEmpty, "\(comparison)")
    }

    @Test("an anonymous SAM 2 decoder: refused, saying SAM 2 needs names")
    func sam2Refused() throws {
        let error = try #require(throws: ImportError.self) { try ONNXImport.importModel(Self.root + "/sam2-decoder.onnx") }
        #expect(error.code == .unmappedTensors)
        #expect(error.message.contains("SAM 2 graphs are matched by name only"), "\(error)")
    }

    @Test("a named export is not matched by structure")
    func namedExportsKeepTheirRules() throws {
        let imported = try ONNXImport.importModel(TestPaths.tinyReferences + "/exports/torchscript-opset17/mobile_sam_decoder.onnx")
        #expect(!imported.names.contains { imported.tensors[$0]?.origin.namedBy?.contains("module order") == true })
    }
}
