import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMVerify

/// Damaged reference sets, unusable arguments, and cases a model cannot run.
@Suite("Verify: bad input, mismatches and not-applicable cases")
struct BadInputTests {
    @Test("NaN in a reference file is reported as non-finite and never passes (exit 2)")
    func nanInReference() throws {
        let folder = try temporaryFolder("nan-reference")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let references = try ReferenceCopy.tiny(in: folder)
        try ReferenceCopy.editNPY(references, "references/points5/onnx_low_res_masks.npy") { $0[1 * 1024 + 3 * 32 + 7] = .nan }
        // Even a tolerance that passes anything finite cannot pass it.
        let report = try Verifier.verify(modelPath: model, referencesPath: references,
                                         options: VerifyOptions(atol: 1e30, rtol: 1e30))
        let check = try #require(report.check("points5", "low_res_masks"))
        #expect(check.status == .badInput)
        #expect(check.problem == "reference references/points5/onnx_low_res_masks.npy holds 1 NaN and 0 infinite value, "
                + "the first at [0,1,3,7]: a non-finite reference never passes")
        #expect(report.exitCode == 2 && report.status == "bad_input")
        #expect(report.counts.badInput == 1 && report.counts.passed == 32)  // 33 checks with preprocess's input_image
        let xml = JUnitReport.render(report)
        #expect(xml.contains(#"<error type="bad_input" message="reference references/points5/onnx_low_res_masks.npy holds 1 NaN"#))
        #expect(TableReport.render(report).contains("points5                 low_res_masks            BAD INPUT"))
    }

    @Test("infinity in an input file makes the case bad input")
    func infinityInInput() throws {
        let folder = try temporaryFolder("inf-input")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let references = try ReferenceCopy.tiny(in: folder)
        try ReferenceCopy.editNPY(references, "references/box/onnx_point_coords.npy") { $0[1] = .infinity }
        try ReferenceCopy.editNPY(references, "references/input_image.npy") { $0[5] = .nan }
        let report = try Verifier.verify(modelPath: model, referencesPath: references)
        let box = try #require(report.cases.first { $0.name == "box" })
        #expect(box.status == .badInput && box.outputs.count == 2)
        #expect(box.outputs.allSatisfy { $0.problem == "input references/box/onnx_point_coords.npy holds 0 NaN and 1 infinite value, the first at [0,0,1]" })
        #expect(report.cases[0].status == .badInput)
        #expect(report.cases[0].outputs[0].problem?.hasPrefix("input references/input_image.npy holds 1 NaN") == true)
        #expect(report.exitCode == 2)
    }

    @Test("a NaN native output fails even under an enormous tolerance (exit 1)")
    func nanOutputFails() throws {
        let folder = try temporaryFolder("nan-output")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.perturbed(try ModelUnderTest.tiny(in: folder),
                                                 tensor: "mask_decoder.iou_prediction_head.layers.2.bias", element: 2, delta: .nan,
                                                 to: folder + "/nan.samw")
        let report = try Verifier.verify(modelPath: model, referencesPath: TestPaths.tinyReferences,
                                         options: VerifyOptions(cases: ["point1"], atol: 1e30, rtol: 1e30))
        let iou = try #require(report.check("point1", "iou_predictions"))
        #expect(iou.status == .fail)
        #expect(iou.figures?.nonFinite == 1 && iou.figures?.firstNonFiniteIndex == [0, 2])
        #expect(report.check("point1", "low_res_masks")?.status == .pass)
        #expect(report.exitCode == 1)
        // The walk names the head (NaN enters there), after every earlier dumped module passed.
        #expect(report.cases[0].divergence?.module == "mask_decoder.iou_prediction_head.layers.2")
    }

    @Test("shape and dtype are checked before values, and a mismatch is a failure (exit 1)")
    func shapeAndDType() throws {
        let folder = try temporaryFolder("shape-dtype")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let references = try ReferenceCopy.tiny(in: folder)
        let iouPath = references + "/references/point1/onnx_iou_predictions.npy"
        let iou = try NPY.read(iouPath).floats()
        try NPY.write(Tensor(shape: [1, 3], floats: Array(iou.prefix(3))), to: iouPath)
        let masksPath = references + "/references/point1/onnx_low_res_masks.npy"
        let masks = try NPY.read(masksPath)
        let doubles = masks.floats().map(Double.init)
        let storage = doubles.withUnsafeBytes { TensorStorage(copying: $0) }
        try NPY.write(try Tensor(dtype: .float64, shape: masks.shape, storage: storage), to: masksPath)

        let report = try Verifier.verify(modelPath: model, referencesPath: references, options: VerifyOptions(cases: ["point1"]))
        let shapeCheck = try #require(report.check("point1", "iou_predictions"))
        #expect(shapeCheck.status == .fail && shapeCheck.figures == nil)
        #expect(shapeCheck.problem == "shape mismatch: native [1,4], reference [1,3]")
        let dtypeCheck = try #require(report.check("point1", "low_res_masks"))
        #expect(dtypeCheck.status == .fail && dtypeCheck.figures == nil)
        #expect(dtypeCheck.problem == "dtype mismatch: native float32, reference float64")
        #expect(report.exitCode == 1)
        // The official path's modules all pass: the failure is in the files, not the model.
        #expect(report.cases[0].divergence?.located == false)
    }

    @Test("a model without a mask path reports the mask-input case as not applicable, visibly")
    func maskInputCaseNotApplicable() throws {
        let folder = try temporaryFolder("no-mask-path")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.edited(try ModelUnderTest.tiny(in: folder), to: folder + "/nomask.samw") { tensors in
            tensors.removeAll { $0.name.hasPrefix("prompt_encoder.mask_downscaling.") }
        }
        let report = try Verifier.verify(modelPath: model, referencesPath: TestPaths.tinyReferences)
        #expect(!report.model.maskPath)
        let maskCase = try #require(report.cases.first { $0.name == "point1_with_mask_input" })
        #expect(maskCase.status == .notApplicable)
        #expect(maskCase.outputs.map(\.status) == [.notApplicable, .notApplicable])
        #expect(maskCase.note?.contains("no mask path") == true)
        #expect(report.counts == CheckCounts(checks: 33, passed: 31, failed: 0, badInput: 0, notApplicable: 2))
        #expect(maskCase.task?.status == .notApplicable)  // no masks to compare either
        #expect(report.exitCode == 0, "\(report.problems)")
        #expect(TableReport.render(report).contains("point1_with_mask_input  low_res_masks            n/a"))
        #expect(JUnitReport.render(report).contains(#"<skipped message="not applicable: the model has no mask path"#))

        // Only not-applicable checks: nothing was verified, which is not a pass.
        let nothing = try Verifier.verify(modelPath: model, referencesPath: TestPaths.tinyReferences,
                                          options: VerifyOptions(cases: ["point1_with_mask_input"]))
        #expect(nothing.exitCode == 2 && nothing.counts.notApplicable == 2)
    }

    @Test("manifest tolerances apply per set, case and output; the command line overrides them")
    func tolerancePrecedence() throws {
        let folder = try temporaryFolder("tolerances")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let references = try ReferenceCopy.tiny(in: folder)
        try ReferenceCopy.editManifest(references) { manifest in
            manifest["tolerances"] = ["atol": 2e-4]
            var cases = try #require(manifest["cases"] as? [[String: Any]])
            let index = try #require(cases.firstIndex { $0["name"] as? String == "point1" })
            cases[index]["tolerances"] = ["atol": 1e-12, "rtol": 0, "outputs": ["onnx_iou_predictions": ["atol": 1e-3]]]
            manifest["cases"] = cases
        }
        let report = try Verifier.verify(modelPath: model, referencesPath: references, options: VerifyOptions(cases: ["point1", "box"]))
        let masks = try #require(report.check("point1", "low_res_masks"))
        #expect(masks.tolerance == ResolvedTolerance(atol: 1e-12, rtol: 0, atolSource: "manifest case point1",
                                                     rtolSource: "manifest case point1"))
        #expect(masks.status == .fail)  // measured errors are ~1e-6
        let iou = try #require(report.check("point1", "iou_predictions"))
        #expect(iou.tolerance.atol == 1e-3 && iou.tolerance.atolSource == "manifest case point1 output onnx_iou_predictions")
        #expect(iou.status == .pass)
        let box = try #require(report.check("box", "low_res_masks"))
        #expect(box.tolerance == ResolvedTolerance(atol: 2e-4, rtol: 1e-4, atolSource: "manifest", rtolSource: "default"))
        #expect(report.exitCode == 1)
        // The walk uses the case's tolerance: at atol 1e-12 the very first decoder module already "diverges".
        #expect(report.cases[0].divergence?.located == true)

        let overridden = try Verifier.verify(modelPath: model, referencesPath: references,
                                             options: VerifyOptions(cases: ["point1"], atol: 1e-4, rtol: 1e-4))
        #expect(overridden.exitCode == 0)
        #expect(overridden.check("point1", "iou_predictions")?.tolerance
                == ResolvedTolerance(atol: 1e-4, rtol: 1e-4, atolSource: "command line", rtolSource: "command line"))
    }

    @Test("unusable arguments and sets are errors with exit status 2")
    func usageErrors() throws {
        let folder = try temporaryFolder("usage")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        func code(_ modelPath: String, _ referencesPath: String, _ options: VerifyOptions = VerifyOptions()) -> VerifyError.Code? {
            do { _ = try Verifier.verify(modelPath: modelPath, referencesPath: referencesPath, options: options) } catch {
                #expect(error.exitCode == 2)
                return error.code
            }
            return nil
        }
        #expect(code(folder + "/none.samw", TestPaths.tinyReferences) == .missingModel)
        #expect(code(TestPaths.tinyReferences + "/config.json", TestPaths.tinyReferences) == .badModel)
        #expect(code(model, folder + "/nowhere") == .unreadableReferences)
        #expect(code(model, TestPaths.tinyReferences + "/dynamo") == .unreadableReferences)
        #expect(code(model, TestPaths.tinyReferences, VerifyOptions(cases: ["point1", "points100"])) == .unknownCase)
        #expect(code(model, TestPaths.tinyReferences, VerifyOptions(atol: -1)) == .usage)
        #expect(code(model, TestPaths.tinyReferences, VerifyOptions(rtol: .nan)) == .usage)
        try FileManager.default.createDirectory(atPath: folder + "/empty/references", withIntermediateDirectories: true)
        #expect(code(model, folder + "/empty") == .noCases)
        // A broken manifest is unreadable references.
        let broken = try ReferenceCopy.tiny(in: folder)
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: broken + "/manifest.json"))
        #expect(code(model, broken) == .unreadableReferences)
    }

    @Test("a case the manifest lists but the folder lacks is bad input; the other cases still run")
    func listedCaseMissing() throws {
        let folder = try temporaryFolder("missing-case")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let references = try ReferenceCopy.tiny(in: folder)
        try FileManager.default.removeItem(atPath: references + "/references/points16")
        let report = try Verifier.verify(modelPath: model, referencesPath: references)
        let missing = try #require(report.cases.first { $0.name == "points16" })
        #expect(missing.status == .badInput)
        #expect(missing.outputs.first?.problem == "the manifest lists case points16, but references/points16/ does not exist")
        #expect(report.counts.passed == 28 && report.exitCode == 2)
    }
}
