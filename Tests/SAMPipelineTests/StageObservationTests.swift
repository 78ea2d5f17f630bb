import Foundation
import SAMConvert
import SAMFormats
import SAMModel
import SAMModelFile
import SAMPipeline
import SAMTensor
import SAMTestSupport
import Testing

/// `StageObservation`: with it on, an observer of an image encoder sees its stages alone, each run on
/// its unobserved (fused) paths, so `sambench profile-encoder` times what runs unobserved. Every family.
@Suite("Encoders observed by stage")
struct StageObservationTests {
    /// (name, inputs, config) of each family's committed tiny weights.
    static let families = [
        ("MobileSAM", [TestPaths.tinyReferences + "/mobile_sam.h5"], TestPaths.tinyReferences),
        ("SAM ViT", [TestPaths.vitTinyReferences + "/sam.h5"], TestPaths.vitTinyReferences),
        ("SAM 2.1", [TestPaths.sam2TinyCheckpoint], TestPaths.sam2TinyReferences),
        ("EfficientViT-SAM", [TestPaths.efficientViTSAMTinyReferences + "/efficientvit_sam.h5"], TestPaths.efficientViTSAMTinyReferences),
    ]

    @Test("the same bits as unobserved; stages only, each once, in the order a full observer sees them",
          arguments: families)
    func stages(_ family: (String, [String], String)) throws {
        let (name, inputs, set) = family
        let folder = try TestPaths.temporaryFolder("stage-observation")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var request = ConversionRequest(inputs: inputs, output: folder + "/model.samw")
        request.configFile = set + "/config.json"
        _ = try Converter.run(request)
        let sam = try ModelFile.load(request.output).sam
        let image = FloatTensor(try NPY.read(set + "/references/input_image.npy"))

        let plain = try sam.encodeImage(image)
        var everyModule: [String] = []
        _ = try sam.encodeImage(image) { path, _ in everyModule.append(path) }
        var staged: [String] = []
        let stagedEmbedding = try StageObservation.$isOn.withValue(true) {
            try sam.encodeImage(image) { path, _ in staged.append(path) }
        }

        #expect(stagedEmbedding.shape == plain.shape && stagedEmbedding.data.map(\.bitPattern) == plain.data.map(\.bitPattern),
                "\(name): observed by stage, the embedding changed")
        #expect(staged.count >= 4 && staged.count < everyModule.count, "\(name): \(staged.count) of \(everyModule.count) paths")
        #expect(Set(staged).count == staged.count, "\(name): a stage reported twice: \(staged)")
        // Modules a full observer sees (the stage, or the last of its children it sees: SAM 2's and
        // EfficientViT-SAM's necks report their parts), in that order, and no stage inside another.
        let positions = staged.map { stage in everyModule.lastIndex { $0 == stage || $0.hasPrefix(stage + ".") } }
        #expect(!positions.contains(nil), "\(name): stages a full observer does not see: \(zip(staged, positions).filter { $0.1 == nil }.map(\.0))")
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted(), "\(name): out of order: \(staged)")
        // (The encoder's own path, where reported, holds them all.)
        for outer in staged where !staged.allSatisfy({ $0 == outer || $0.hasPrefix(outer + ".") }) {
            let inner = staged.filter { $0.hasPrefix(outer + ".") }
            #expect(inner.isEmpty, "\(name): \(inner) reported inside \(outer)")
        }
    }
}
