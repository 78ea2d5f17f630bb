import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMVerify

/// The `preprocess` case: each stage from the set's own previous stage, apart from the model.
@Suite("Verify: preprocessing kept apart")
struct PreprocessVerifyTests {
    @Test("the tiny set's normalised input matches bit for bit")
    func tinyInputMatches() throws {
        let folder = try temporaryFolder("preprocess")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let report = try Verifier.verify(modelPath: try ModelUnderTest.tiny(in: folder), referencesPath: TestPaths.tinyReferences,
                                         options: VerifyOptions(cases: ["preprocess"]))
        let check = try #require(report.check("preprocess", "input_image"))
        #expect(check.status == .pass && check.figures?.maxAbs == 0 && check.shape == [1, 3, 128, 128])
        #expect(report.cases.first?.inputs == ["references/resized_image.npy"])
        #expect(report.cases.first?.note?.contains("no photo") == true)
    }

    /// One level of one pixel of the resized image moved: normalising it no longer gives the set's input,
    /// and that is reported on the preprocessing case alone: the encoder takes the set's input, so it
    /// still passes and is not blamed.
    @Test("a resize difference is reported as preprocessing, not blamed on the encoder")
    func resizeDifferenceStaysApart() throws {
        let folder = try temporaryFolder("preprocess-apart")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let references = try ReferenceCopy.tiny(in: folder)
        let file = references + "/references/resized_image.npy"
        let resized = try NPY.read(file)
        var pixels = resized.floats().map { UInt8($0) }
        pixels[(10 * 128 + 20) * 3 + 1] = pixels[(10 * 128 + 20) * 3 + 1] == 255 ? 254 : pixels[(10 * 128 + 20) * 3 + 1] + 1
        let storage = pixels.withUnsafeBytes { TensorStorage(copying: $0) }
        try NPY.write(Tensor(dtype: .uint8, shape: resized.shape, checkedStorage: storage), to: file)

        let report = try Verifier.verify(modelPath: model, referencesPath: references,
                                         options: VerifyOptions(cases: ["image_encoder", "preprocess"]))
        let check = try #require(report.check("preprocess", "input_image"))
        #expect(check.status == .fail && check.figures?.failing == 1 && check.figures?.worstIndex == [0, 1, 10, 20])
        // One level over the green channel's std (57.12).
        #expect(abs((check.figures?.maxAbs ?? 0) - 1 / 57.12) < 1e-6)
        #expect(report.cases.first { $0.kind == .imageEncoder }?.status == .pass)
        #expect(report.cases.first { $0.kind == .preprocess }?.divergence?.note.contains("preprocessing has no modules") == true)
        #expect(report.exitCode == 1)
    }
}
