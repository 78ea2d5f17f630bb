import Foundation
import SAMFormats
import SAMImport
import SAMTestSupport
import Testing

/// reference_outputs/tiny/anonymous (converters/make_anonymous_fixtures.py): tiny decoder exports
/// with every initializer and value renamed, node names and metadata removed, some re-sorted into
/// another topological order. Nothing but the structure says which weight is which.
@Suite("Structural match")
struct StructuralMatchTests {
    static let root = TestPaths.tinyReferences + "/anonymous"

    struct AnonymousFile: CustomTestStringConvertible, Sendable {
        let path: String
        let components: Set<SAMComponent>
        var testDescription: String { path }
    }

    static let files: [AnonymousFile] = {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: root + "/manifest.json")),
              let manifest = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let files = manifest["files"] as? [String: [String: Any]] else { return [] }
        return files.keys.sorted().filter { files[$0]?["edit"] == nil }.map { path in
            let components = (files[path]?["components"] as? [String] ?? []).compactMap(SAMComponent.init(rawValue:))
            return AnonymousFile(path: path, components: Set(components))
        }
    }()

    @Test("the fixtures cover both exporters, both LayerNorm forms, re-sorted graphs and the split pair")
    func coverage() {
        let names = Self.files.map(\.path)
        #expect(names.count == 10, "\(names)")
        for part in ["torchscript-opset14", "torchscript-opset17", "dynamo", "onnxslim", "shuffled", "PromptEncoder", "MaskDecoder"] {
            #expect(names.contains { $0.contains(part) }, "no fixture with \(part)")
        }
    }

    @Test("each anonymous export gives the state dict's tensors, bit for bit", arguments: files)
    func matchesStateDict(_ file: AnonymousFile) throws {
        let imported = try ONNXImport.importModel(Self.root + "/" + file.path)
        let comparison = WeightComparison(imported, against: TinyImportTests.stateDict, components: file.components) {
            // The split PromptEncoder takes no mask input: it holds no mask_downscaling.
            !(file.path.hasSuffix("PromptEncoder.onnx") && $0.hasPrefix("prompt_encoder.mask_downscaling."))
        }
        comparison.expectMatches()
        // Every weight that is not a root-scope tensor was named by its place in the structure.
        let byStructure = imported.names.filter { imported.tensors[$0]?.origin.namedBy?.contains("module order") == true }
        #expect(byStructure.count >= imported.names.count - 4, "\(imported.names.count - byStructure.count) not matched by structure")
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

    @Test("a named export is not matched by structure")
    func namedExportsKeepTheirRules() throws {
        let imported = try ONNXImport.importModel(TestPaths.tinyReferences + "/exports/torchscript-opset17/mobile_sam_decoder.onnx")
        #expect(!imported.names.contains { imported.tensors[$0]?.origin.namedBy?.contains("module order") == true })
    }
}
