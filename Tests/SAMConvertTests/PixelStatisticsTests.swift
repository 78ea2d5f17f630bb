import Foundation
import SAMConvert
import SAMModel
import SAMModelFile
import SAMTestSupport
import Testing

/// Pixel statistics are part of a model's configuration: read from a config.json's `pixelMean` /
/// `pixelStd`, kept in the .samw, and refused when they could not give a finite input.
@Suite("Pixel statistics in the configuration")
struct PixelStatisticsTests {
    /// The tiny set's config.json with its top-level statistics replaced, written to `folder`.
    static func config(mean: [Double], std: [Double], in folder: String) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: TestPaths.tinyReferences + "/config.json"))
        var object = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["pixelMean"] = mean
        object["pixelStd"] = std
        let path = folder + "/config.json"
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("SAM's statistics are the default and are not written; others travel into the model file")
    func roundTrip() throws {
        let tiny = try SAMConfig(contentsOf: TestPaths.tinyReferences + "/config.json")
        #expect(tiny.imageEncoder.preprocessing == .sam)
        #expect(!String(decoding: tiny.jsonData(), as: UTF8.self).contains("imagePreprocessing"))

        let folder = try TestPaths.temporaryFolder("pixelstats")
        var request = ConversionRequest(inputs: [TestPaths.tinyReferences + "/mobile_sam.h5"], output: folder + "/model.samw")
        request.configFile = try Self.config(mean: [127.5, 127.5, 127.5], std: [127.5, 64, 32], in: folder)
        _ = try Converter.run(request)
        let stored = try ModelFile.load(request.output).metadata.config.imageEncoder.preprocessing
        #expect(stored.pixelMean == [127.5, 127.5, 127.5] && stored.pixelStd == [127.5, 64, 32])
    }

    @Test("statistics that would not give a finite input are refused, at the top level and nested")
    func refused() throws {
        let folder = try TestPaths.temporaryFolder("pixelstats-bad")
        for (mean, std) in [([0.0, 0, 0], [1.0, 0, 1]), ([0.0, 0], [1.0, 1]), ([Double.greatestFiniteMagnitude, 0, 0], [-1.0, 1, 1])] {
            let path = try Self.config(mean: mean, std: std, in: folder)
            #expect(throws: ConfigError.self) { try SAMConfig(contentsOf: path) }
        }
        var config = try SAMConfig(contentsOf: TestPaths.tinyReferences + "/config.json")
        config.imageEncoder.preprocessing = ImagePreprocessing(resize: .longestSide, pixelMean: [1, 2, 3], pixelStd: [1, 1, 1])
        let text = String(decoding: config.jsonData(), as: UTF8.self).replacingOccurrences(of: "\"pixelStd\":[1,1,1]", with: "\"pixelStd\":[1,0,1]")
        #expect(text.contains("[1,0,1]"))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(SAMConfig.self, from: Data(text.utf8)) }
    }
}
