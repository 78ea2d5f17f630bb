import Foundation
import SAMImport
import SAMTensor
import SAMTestSupport
import Testing

/// Fixtures/samexporter_vit_tiny.onnx: reference_outputs/vit_tiny's encoder exported by samexporter
/// 0.5.0 with `--use-preprocess` (converters/export_samexporter.py): the graph takes the resized image
/// [H, W, 3], subtracts the pixel mean, divides by the std, permutes and pads. The weights import as
/// the state dict's; the two statistics are recognised as preprocessing, not weights.
@Suite("samexporter encoder with in-graph preprocessing")
struct SamexporterImportTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/samexporter_vit_tiny.onnx").path

    @Test("the encoder's weights are the state dict's, bit for bit")
    func sameWeights() throws {
        let imported = try ONNXImport.importModel(Self.fixture)
        let reference = try StateDictImport.importHDF5(TestPaths.vitTinyReferences + "/sam.h5")
        WeightComparison(imported, against: reference, components: [.imageEncoder]).expectMatches()
        #expect(imported.components == [.imageEncoder])
        #expect(imported.unmapped.isEmpty)
    }

    @Test("pixel mean and std are recognised as the graph's preprocessing, with SAM's values")
    func statistics() throws {
        let imported = try ONNXImport.importModel(Self.fixture)
        let recognised = imported.ignored.filter { $0.rule == .inGraphPixelNormalization }
        #expect(recognised.count == 2)
        let normalization = try #require(imported.facts.inGraphNormalization)
        #expect(normalization.file == Self.fixture)
        // ref: samexporter/export_encoder.py run_export pixel_mean / pixel_std (float32 in the graph)
        #expect(normalization.pixelMean == [123.675, 116.28, 103.53].map { Double(Float($0)) })
        #expect(normalization.pixelStd == [58.395, 57.12, 57.375].map { Double(Float($0)) })
        #expect(Set(recognised.map(\.name)) == Set([normalization.meanTensor, normalization.stdTensor].compactMap { $0 }))
    }
}
