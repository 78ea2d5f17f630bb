import Foundation
import SAMConvert
import SAMFiles
import SAMFormats
import SAMModelFile
import SAMTestSupport
import Testing

/// What a load checks before it builds anything: the stored configuration's bounds, the components
/// and the dense positional encoding the metadata names against the tensor table, the checksums.
@Suite("Model file load checks: metadata against the table, bounds, checksums")
struct ModelFileChecksTests {
    static func expectRefused(_ path: String, saying text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try ModelFile.load(path)
            Issue.record("\(path) loaded", sourceLocation: sourceLocation)
        } catch {
            #expect("\(error)".contains(text), "\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("components, dense positional encoding and configuration that disagree with the table are refused")
    func metadataAgainstTable() throws {
        let folder = try TestPaths.temporaryFolder("loadchecks")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try TestModels.tiny(in: folder)
        _ = try ModelFile.load(model)

        let fewer = try ModelFamilyTests.rewritten(model, as: "fewer.samw", in: folder) {
            $0["components"] = .array([.string("image_encoder")])
        }
        Self.expectRefused(fewer, saying: "lists components [\"image_encoder\"] but its tensors hold")

        let wrongPE = try ModelFamilyTests.rewritten(model, as: "pe.samw", in: folder) {
            $0["densePositionalEncoding"] = .string("mask_decoder.iou_token.weight")
        }
        Self.expectRefused(wrongPE, saying: "dense positional encoding 'mask_decoder.iou_token.weight' has shape")

        let huge = try ModelFamilyTests.rewritten(model, as: "huge.samw", in: folder) { metadata in
            guard case .object(var config)? = metadata["config"] else { return }
            config["maxPoints"] = .number(0)
            metadata["config"] = .object(config)
        }
        Self.expectRefused(huge, saying: "maxPoints 0 is not in 1...65536")
    }

    @Test("a changed weight byte is refused at load, and loads when checksums are skipped")
    func checksums() throws {
        let folder = try TestPaths.temporaryFolder("loadcrc")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try TestModels.tiny(in: folder)
        let entry = try #require(SAMWFile(path: model).entries.last { $0.length > 0 })
        var bytes = try Data(contentsOf: URL(fileURLWithPath: model))
        bytes[entry.offset] ^= 0x10
        try bytes.write(to: URL(fileURLWithPath: model))
        Self.expectRefused(model, saying: "tensor '\(entry.name)': checksum")
        _ = try ModelFile.load(model, verifyingChecksums: false)
    }
}
