import Foundation
import SAMConvert
import SAMFormats
import SAMModel
import SAMModelFile
import SAMTensor
import SAMTestSupport
import Testing

/// samexporter's encoder normalises pixels in its graph; the runtime normalises before its encoder, so
/// conversion checks those statistics against a config file's preprocessing, or records them in the
/// configuration it infers.
@Suite("Conversion: in-graph preprocessing")
struct InGraphPreprocessingTests {
    static let fixture = TestPaths.packageRoot + "/Tests/SAMImportTests/Fixtures/samexporter_vit_tiny.onnx"
    static let config = TestPaths.vitTinyReferences + "/config.json"

    /// A copy of the fixture with the first element of the 3-float constant `values` replaced.
    static func patched(_ values: [Float], firstBecomes replacement: Float, in folder: String) throws -> String {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: fixture))
        let needle = values.withUnsafeBytes { Data($0) }
        let range = try #require(bytes.range(of: needle), "\(values) not found")
        #expect(bytes[range.upperBound...].range(of: needle) == nil, "\(values) occurs twice")
        var value = replacement
        withUnsafeBytes(of: &value) { bytes.replaceSubrange(range.lowerBound..<range.lowerBound + 4, with: $0) }
        let path = folder + "/encoder.onnx"
        try bytes.write(to: URL(fileURLWithPath: path))
        return path
    }

    static func convert(_ encoder: String, in folder: String) throws(ConversionFailure) -> ConversionResult {
        var request = ConversionRequest(inputs: [encoder, TestPaths.vitTinyReferences + "/sam_decoder.onnx"], output: folder + "/model.samw")
        request.configFile = config
        return try Converter.run(request)
    }

    @Test("SAM's statistics in the graph: converted, recorded in the import facts")
    func matching() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try Self.convert(Self.fixture, in: folder)
        #expect(result.imported.facts.inGraphNormalization?.file == Self.fixture)
        #expect(result.metadata.components.count == 3)
    }

    @Test("without a config file, the graph's statistics become the model's preprocessing")
    func recorded() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let encoder = try Self.patched([123.675, 116.28, 103.53], firstBecomes: 127.5, in: folder)
        let request = ConversionRequest(inputs: [encoder], output: folder + "/model.samw")
        let result = try Converter.run(request)
        let stored = try ModelFile.load(request.output).metadata.config.imageEncoder.preprocessing
        #expect(stored.pixelMean == [127.5, Double(Float(116.28)), Double(Float(103.53))])
        #expect(stored.pixelStd == [58.395, 57.12, 57.375].map { Double(Float($0)) })
        #expect(result.metadata.config.imageEncoder.preprocessing == stored)
        // SAM's own statistics leave the default in place (nothing extra written).
        let plain = try Converter.run(ConversionRequest(inputs: [Self.fixture], output: folder + "/plain.samw"))
        #expect(plain.metadata.config.imageEncoder.preprocessing == .sam)
    }

    @Test("another pixel mean or std than the config file's is refused, naming the file and the constant",
          arguments: [([Float(123.675), 116.28, 103.53], "subtracts pixel mean"), ([Float(58.395), 57.12, 57.375], "divides by pixel std")])
    func mismatch(values: [Float], wording: String) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let encoder = try Self.patched(values, firstBecomes: values[0] + 1, in: folder)
        let failure = try #require(throws: ConversionFailure.self) { try Self.convert(encoder, in: folder) }
        #expect(failure.message.hasPrefix("\(encoder): tensor '/Constant"), "\(failure)")
        #expect(failure.message.contains(wording) && failure.message.contains(Self.config), "\(failure)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/model.samw"))
    }
}
