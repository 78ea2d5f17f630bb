import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMVerify

/// The task level: the thresholded full-size masks, native against reference, beside the tensor figures.
@Suite("Verify: task level")
struct TaskLevelTests {
    @Test("every case reports mask IoU and best-mask agreement, in the table, the JSON and the JUnit")
    func everyCaseReports() throws {
        let folder = try temporaryFolder("task-every-case")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let report = try Verifier.verify(modelPath: try ModelUnderTest.tiny(in: folder), referencesPath: TestPaths.tinyReferences)
        for result in report.cases where result.kind != .preprocess {
            let task = try #require(result.task, "\(result.name)")
            #expect(task.status == .pass && task.minMaskIoU != nil && task.bestMaskAgreements == task.prompts.count,
                    "\(result.name): \(task.summary)")
            #expect(task.prompts.allSatisfy { $0.selected == [1, 2, 3] && $0.masks.count == 4 })
            #expect(task.frame?.originalSize.height == 85 && task.frame?.originalSize.width == 128)
        }
        // The encoder's check runs every decoder case's prompt end to end.
        #expect(report.cases.first { $0.kind == .imageEncoder }?.task?.prompts.count == 8)
        #expect(report.taskThresholds == TaskThresholds.defaults)

        let table = TableReport.render(report)
        #expect(table.contains("task level (thresholded full-size masks, native against reference): mask IoU >= 0.99 for "
                               + "masks 1-3 (multimask output), best mask must agree (default)"))
        #expect(table.contains("MIN MASK IOU  BEST MASK (NATIVE/REF)"))
        let xml = JUnitReport.render(report)
        #expect(xml.components(separatedBy: #"name="task""#).count - 1 == 9)
        #expect(xml.contains(#"<property name="task_require_best_mask" value="true"/>"#))
        let json = String(decoding: try report.jsonData(), as: UTF8.self)
        #expect(json.contains(#""minMaskIoU" : 0.99"#) && json.contains(#""bestAgrees" : true"#))
    }

    /// The fuzzed set's near ties are prompts whose reference best mask wins by less than the default
    /// atol. Moving the runner-up's IoU-head bias by a little more than that margin (and less than atol)
    /// keeps every tensor within 1e-4 (the masks do not move at all) and makes the native runtime pick
    /// another mask: only the task level sees it.
    @Test("an IoU-head bias moved by less than atol passes every tensor and flips a best mask")
    func bestMaskFlip() throws {
        let folder = try temporaryFolder("task-flip")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let tie = try #require(try Self.closestCall(in: TestPaths.tinyFuzz))
        #expect(tie.margin < 1e-4, "the set has no best mask decided by less than atol: \(tie)")
        let delta = Float((tie.margin + 1e-4) / 2)
        let honest = try ModelUnderTest.tiny(in: folder)
        let model = try ModelUnderTest.perturbed(honest, tensor: "mask_decoder.iou_prediction_head.layers.2.bias",
                                                 element: tie.runnerUp, delta: delta, to: folder + "/flipped.samw")
        let options = VerifyOptions(cases: [tie.name])

        let passing = try Verifier.verify(modelPath: honest, referencesPath: TestPaths.tinyFuzz, options: options)
        #expect(passing.exitCode == 0, "the honest model agrees on the near tie: \(passing.problems)")

        let report = try Verifier.verify(modelPath: model, referencesPath: TestPaths.tinyFuzz, options: options)
        print(TableReport.render(report))
        let result = try #require(report.cases.first)
        #expect(result.outputs.allSatisfy { $0.status == .pass && $0.tolerance.atol == 1e-4 }, "\(report.problems)")
        #expect(report.check(tie.name, "iou_predictions")?.figures?.maxAbs ?? 1 < 1e-4)
        let prompt = try #require(result.task?.prompts.first)
        #expect(!prompt.bestAgrees && prompt.nativeBest == tie.runnerUp && prompt.referenceBest == tie.best)
        #expect(prompt.minMaskIoU == 1)  // the masks themselves are untouched
        #expect(result.status == .fail && report.exitCode == 1 && report.status == "fail")
        #expect(report.taskCounts.failedWithTensorsPassing == 1)
        let table = TableReport.render(report)
        #expect(table.contains("TASK FAILURE in \(tie.name) (official decoder path on the reference image embeddings): "
                               + "every tensor is within tolerance, the masks are not:"))
        #expect(table.contains("best mask differs: native \(tie.runnerUp), reference \(tie.best)"))
        #expect(JUnitReport.render(report).contains(#"<failure type="task_mismatch" message="every tensor within tolerance, but "#
                                                    + "\(tie.name): best mask differs: native \(tie.runnerUp), reference \(tie.best)"))
    }

    /// The decoder case whose reference best mask (of masks 1-3) wins by the smallest margin, read from the
    /// reference files themselves.
    static func closestCall(in set: String) throws -> (name: String, margin: Double, best: Int, runnerUp: Int)? {
        var closest: (name: String, margin: Double, best: Int, runnerUp: Int)?
        for name in try FileManager.default.contentsOfDirectory(atPath: set + "/references").sorted() {
            let file = set + "/references/" + name + "/onnx_iou_predictions.npy"
            guard FileManager.default.fileExists(atPath: file) else { continue }
            let scores = try NPY.read(file).floats().map(Double.init)
            let ranked = [1, 2, 3].sorted { scores[$0] > scores[$1] }
            let margin = scores[ranked[0]] - scores[ranked[1]]
            if closest == nil || margin < closest!.margin { closest = (name, margin, ranked[0], ranked[1]) }
        }
        return closest
    }

    @Test("thresholds come from the manifest's task_thresholds; a bad one is bad input")
    func manifestThresholds() throws {
        let folder = try temporaryFolder("task-thresholds")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let references = try ReferenceCopy.tiny(in: folder)
        try ReferenceCopy.editManifest(references) {
            $0["task_thresholds"] = ["min_mask_iou": 0.999, "masks": "all", "max_iou_prediction_error": 1e-5]
        }
        let report = try Verifier.verify(modelPath: model, referencesPath: references, options: VerifyOptions(cases: ["box"]))
        #expect(report.exitCode == 0, "\(report.problems)")
        let thresholds = report.taskThresholds
        #expect(thresholds.minMaskIoU == 0.999 && thresholds.masks == .all && thresholds.maxIoUPredictionError == 1e-5)
        #expect(thresholds.source == "manifest" && thresholds.requireBestMask)
        #expect(report.cases.first?.task?.prompts.first?.selected == [0, 1, 2, 3])
        #expect(TableReport.render(report).contains("mask IoU >= 0.999 for all 4 masks, best mask must agree, "
                                                    + "IoU prediction error <= 1.00e-05 (manifest)"))
        #expect(JUnitReport.render(report).contains(#"<property name="task_masks" value="all"/>"#))

        // A bar the honest model cannot meet fails it, at the task level only.
        try ReferenceCopy.editManifest(references) { $0["task_thresholds"] = ["max_iou_prediction_error": 1e-9] }
        let strict = try Verifier.verify(modelPath: model, referencesPath: references, options: VerifyOptions(cases: ["box"]))
        #expect(strict.exitCode == 1 && strict.counts.failed == 0)
        #expect(strict.cases.first?.task?.failures.first?.contains("IoU prediction error") == true)

        for bad: Any in [["min_mask_iou": 2], ["masks": "some"], ["require_best_mask": "yes"], "loose"] {
            try ReferenceCopy.editManifest(references) { $0["task_thresholds"] = bad }
            #expect(throws: VerifyError.self, "\(bad)") {
                try Verifier.verify(modelPath: model, referencesPath: references, options: VerifyOptions(cases: ["box"]))
            }
        }
    }

    @Test("selection rules: multimask, all, and the official single-mask reweighting")
    func selection() {
        let scores = [0.9, 0.5, 0.7, 0.6]
        #expect(TaskComparison.select(.multimask, scores: scores, tokenCount: 2) == [1, 2, 3])
        #expect(TaskComparison.select(.all, scores: scores, tokenCount: 2) == [0, 1, 2, 3])
        // One point plus the padding point: mask 0 loses 500, mask 2 wins; a box and a point favour mask 0.
        #expect(TaskComparison.select(.single, scores: scores, tokenCount: 2) == [2])
        #expect(TaskComparison.select(.single, scores: scores, tokenCount: 3) == [0])
        #expect(TaskComparison.best([1, 2, 3], [0, 0.5, 0.5, 0.1]) == 1)  // the first of equal scores, as argmax
    }
}
