import Foundation
import SAMConvert
import SAMImage
import SAMImageFiles
import SAMPipeline
import SAMTestSupport
import Testing

/// Models are mapped while used and replaced by rename (samconvert --force), never rewritten in place:
/// a process that loaded the old file keeps computing with it, bit for bit, while a new load sees the
/// new file. (README § Outputs and inputs: copying over a mapped model in place is not supported.)
@Suite("Pipeline: a model replaced by rename while it is loaded")
struct ModelReplacementTests {
    @Test("The loaded model keeps its results after samconvert --force renames another model over its file")
    func replacedByRename() throws {
        let folder = try TinyPipeline.folder()
        let path = try TinyPipeline.model(in: folder)
        let inode = FileManager.default.fileIdentity(path)
        let segmenter = try SegmentAnything(modelPath: path)
        try segmenter.setImage(try ImageIO.read(try TinyPipeline.photo(in: folder)))
        let prompt = Prompt(points: [.init(x: 60, y: 40)])
        let before = try segmenter.predict(prompt)

        // Another model (f16 weights) renamed over the same name, as samconvert --force does.
        var request = ConversionRequest(inputs: [TestPaths.tinyReferences + "/mobile_sam.h5"], output: path)
        request.configFile = TestPaths.tinyReferences + "/config.json"
        request.precision = .half
        request.overwrite = true
        _ = try Converter.run(request)
        #expect(FileManager.default.fileIdentity(path) != inode, "the model was rewritten in place, not renamed over")

        let after = try segmenter.predict(prompt)
        #expect(after.lowResLogits.data == before.lowResLogits.data && after.iouPredictions == before.iouPredictions)
        let reloaded = try SegmentAnything(modelPath: path)
        #expect(reloaded.model.metadata.weightDType == "f16" && reloaded.modelIdentity != segmenter.modelIdentity)
    }
}

extension FileManager {
    func fileIdentity(_ path: String) -> UInt64? {
        (try? attributesOfItem(atPath: path)[.systemFileNumber] as? NSNumber)?.uint64Value
    }
}
