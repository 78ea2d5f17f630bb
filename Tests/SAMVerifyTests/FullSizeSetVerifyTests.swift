import Foundation
import SAMImage
import SAMTestSupport
import Testing
@testable import SAMVerify

/// samverify on a full-size reference set as it is (no manifest edits, no extra files): the model is
/// converted from the full-size set's own `mobile_sam.h5`. `make check-reference-set` runs this suite (an optimized build,
/// with the full-size set required); elsewhere it runs only when SAM_REFERENCE_SET_DIR points at the full-size set.
@Suite("Full-size set: verify: mobilesam-seed0", .enabled(if: TestPaths.fullSizeSetIsPresent))
struct FullSizeSetVerifyTests {
    @Test("the model converted from the full-size set's mobile_sam.h5 passes every case of the full-size set")
    func dropPasses() throws {
        let folder = try temporaryFolder("fullSet")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.fullSizeSet(in: folder)
        let report = try Verifier.verify(modelPath: model, referencesPath: TestPaths.fullSizeSet)
        print(TableReport.render(report))
        #expect(report.exitCode == 0, "\(report.problems)")
        #expect(report.cases.map(\.name) == ["image_encoder", "point1", "points2_pos_neg", "points5", "points16", "points100",
                                             "box", "box_point", "point1_with_mask_input", "preprocess"])
        // 1 encoder + 8 official * 2 + 5 point-only cases * 3 split outputs + 2 preprocessing stages (the full-size set has
        // image.png, the resized image and the input, no decoded reference).
        #expect(report.counts == CheckCounts(checks: 34, passed: 34, failed: 0, badInput: 0, notApplicable: 0))
        #expect(report.cases.last?.outputs.map(\.output) == ["resized_image", "input_image"])
        // Every case but preprocessing reports mask IoU and best-mask agreement, at the photo's size.
        #expect(report.taskCounts == TaskCounts(cases: 9, passed: 9))
        for result in report.cases where result.kind != .preprocess {
            let task = try #require(result.task, "\(result.name)")
            #expect(task.frame?.originalSize == ImageSize(height: 1365, width: 2048))
            #expect(task.minMaskIoU != nil && task.bestMaskDisagreements == 0, "\(result.name): \(task.summary)")
        }
        #expect(report.model.maskPath)
        let maskCase = try #require(report.cases.first { $0.name == "point1_with_mask_input" })
        #expect(maskCase.status == .pass)  // applicable: the full-size set's weights have the mask path
        #expect(report.check("image_encoder", "image_embeddings")?.shape == [1, 256, 64, 64])
        #expect(report.check("points100", "low_res_masks")?.shape == [1, 4, 256, 256])
        #expect(!report.references.layout.contains("per-module dumps for"))
    }
}
