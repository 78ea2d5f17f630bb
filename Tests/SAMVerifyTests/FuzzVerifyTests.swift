import Foundation
import SAMFiles
import SAMFormats
import SAMTestSupport
import Testing
@testable import SAMVerify

/// The committed fuzzed sets (converters/export_fuzz.py): seeded random points, boxes, boxes with
/// points and mask-input refinement chains on each tiny set's image, with PyTorch's outputs.
@Suite("Verify: fuzzed prompts")
struct FuzzVerifyTests {
    @Test("the tiny MobileSAM model passes every one of 200+ seeded prompts, tensors and masks")
    func tinyFuzz() throws {
        let folder = try temporaryFolder("fuzz-tiny")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let report = try Verifier.verify(modelPath: try ModelUnderTest.tiny(in: folder), referencesPath: TestPaths.tinyFuzz,
                                         options: VerifyOptions(locateDivergence: false))
        try Self.expectAllPass(report, set: TestPaths.tinyFuzz, atLeast: 200)
    }

    @Test("the tiny SAM ViT model passes every seeded prompt of its set")
    func vitFuzz() throws {
        let folder = try temporaryFolder("fuzz-vit")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let report = try Verifier.verify(modelPath: try ViTVerifyTests.model(in: folder), referencesPath: TestPaths.vitTinyFuzz,
                                         options: VerifyOptions(locateDivergence: false))
        try Self.expectAllPass(report, set: TestPaths.vitTinyFuzz, atLeast: 64)
    }

    /// Every case of the set ran (as many as the manifest lists, every kind of prompt among them), each
    /// with two checks and a task-level check, all passing.
    static func expectAllPass(_ report: VerificationReport, set: String, atLeast: Int) throws {
        let manifest = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: URL(fileURLWithPath: set + "/manifest.json")))
        let listed = manifest["cases"]?.arrayValue ?? []
        #expect(manifest["fuzz"]?["seed"]?.numberValue != nil, "the seed is in the manifest")
        #expect(listed.count >= atLeast && report.cases.count == listed.count)
        let kinds = Set(listed.compactMap { $0["prompt"]?["kind"]?.stringValue })
        #expect(kinds.isSuperset(of: ["points", "box", "box_points", "chain"]), "\(kinds)")
        let chained = report.cases.filter { $0.inputs.contains { $0.hasSuffix("/onnx_mask_input.npy") } }
        #expect(!chained.isEmpty, "refinement chains feed a mask back")
        #expect(report.counts == CheckCounts(checks: 2 * listed.count, passed: 2 * listed.count, failed: 0, badInput: 0, notApplicable: 0),
                "\(report.problems)")
        #expect(report.taskCounts == TaskCounts(cases: listed.count, passed: listed.count))
        #expect(report.exitCode == 0)
        let worst = report.cases.compactMap(\.task?.minMaskIoU).min() ?? 0
        print("\(set): \(listed.count) prompts, min mask IoU \(worst), max abs "
              + formatFigure(report.checks.compactMap { $0.check.figures?.maxAbs }.max() ?? 0))
    }
}
