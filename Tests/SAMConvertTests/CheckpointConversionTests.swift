import Foundation
import SAMConvert
import SAMFormats
import SAMModelFile
import SAMTensor
import SAMTestSupport
import Testing

/// The tiny model's state dict as .pth and .safetensors (Tests/SAMImportTests/Fixtures, written from
/// reference_outputs/tiny/mobile_sam.h5): conversion stores what it stores from the h5, bit for bit.
@Suite("Conversion: .pth and .safetensors state dicts")
struct CheckpointConversionTests {
    static let tiny = TestPaths.tinyReferences
    static let fixtures = TestPaths.packageRoot + "/Tests/SAMImportTests/Fixtures"

    static func convert(_ inputs: [String], config: String? = tiny + "/config.json") throws -> ConversionResult {
        var request = ConversionRequest(inputs: inputs, output: try temporaryFolder() + "/model.samw")
        request.configFile = config
        return try Converter.run(request)
    }

    @Test("a folder holding a .pth and config.json is picked up, converts, and matches PyTorch")
    func folderWithPyTorch() throws {
        let folder = try temporaryFolder()
        for (source, name) in [(Self.fixtures + "/tiny_mobile_sam.pth", "mobile_sam.pth"), (Self.tiny + "/config.json", "config.json")] {
            try FileManager.default.copyItem(atPath: source, toPath: folder + "/" + name)
        }
        let output = try temporaryFolder() + "/model.samw"
        let result = try Converter.run(ConversionRequest(inputs: [folder], output: output))
        #expect(result.metadata.provenance.sources.map(\.path) == [folder + "/mobile_sam.pth", folder + "/config.json"])
        let model = try ModelFile.load(output)
        let errors = try ReferenceCheck(root: Self.tiny).run(model.sam)
        #expect(errors.within(1e-4), "\(errors)")
    }

    @Test("stored tensors equal the h5 conversion's bit for bit", arguments: ["tiny_mobile_sam.pth", "tiny_mobile_sam.safetensors"])
    func sameAsHDF5(name: String) throws {
        let reference = try Self.convert([Self.tiny + "/mobile_sam.h5"]).storedTensors
        let converted = try Self.convert([Self.fixtures + "/" + name]).storedTensors
        #expect(converted.keys.sorted() == reference.keys.sorted())
        for (key, tensor) in converted {
            #expect(try reference[key].map { try tensor.read().isBitwiseEqual(to: $0.read()) } == true, "\(key)")
        }
    }

    @Test("a refused pickle global stops the conversion naming file and global; nothing is written")
    func refusedGlobal() throws {
        let hostile = TestPaths.packageRoot + "/Tests/SAMFormatsTests/Fixtures/pth_refuse_os_system.pth"
        try? FileManager.default.removeItem(atPath: "/tmp/samport-marker-os-system")
        let output = try temporaryFolder() + "/model.samw"
        let failure = #expect(throws: ConversionFailure.self) { try Converter.run(ConversionRequest(inputs: [hostile], output: output)) }
        #expect(failure?.message.contains(hostile) == true && failure?.message.contains("'os.system'") == true,
                "\(String(describing: failure))")
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(!FileManager.default.fileExists(atPath: "/tmp/samport-marker-os-system"))
    }
}
