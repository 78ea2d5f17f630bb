import Foundation
import SAMEverything
import SAMEverythingFiles
import SAMFiles
import SAMFormats
import SAMImage
import SAMImageFiles
import SAMPipeline
import SAMVerify

/// `samverify MODEL --references SET` where SET is a segment-everything set (`manifest.json` kind
/// `sam_automatic_masks`, from converters/export_amg.py): the native generator with the set's
/// parameters on each photo, its masks matched one to one with upstream's; JSON, JUnit and a picture
/// report of the unmatched masks.
extension SamVerify {
    func verifyEverything() -> Int32 {
        let notApplicable = [("--case", !cases.isEmpty), ("--atol", atol != nil), ("--rtol", rtol != nil), ("--tolerances", tolerances != nil),
                             ("--determinism", determinism), ("--calibrate", calibrate != nil), ("--dump-outputs", dumpOutputs != nil),
                             ("--bf16", bfloat16), ("--int8-products", int8Products)].filter(\.1).map(\.0)
        let inputs = ReportFiles.inputs(model: model, references: references)
        do throws(VerifyError) {
            guard notApplicable.isEmpty else {
                throw VerifyError(.usage, "\(notApplicable.joined(separator: ", ")) do(es) not apply to a segment-everything set; "
                                  + "it is checked mask set against mask set")
            }
            try ReportFiles.checkOutputs(json: json, junit: junit, inputs: inputs)
            if let report { try ReportFiles.checkOutput(report + "/index.html", option: "--report", inputs: inputs) }
        } catch {
            FileHandle.standardError.write(Data("samverify: \(TerminalText.escaped(error.message, keepingNewlines: true))\n".utf8))
            return error.exitCode
        }
        let runs: [EverythingVerification.ImageRun]
        do {
            let set = try AutomaticMaskReferenceSet(folder: references)
            let segmenter = try SegmentAnything(modelPath: model)
            runs = try EverythingVerification.run(segmenter, set: set, progress: progress)
        } catch {
            FileHandle.standardError.write(Data("samverify: \(TerminalText.escaped("\(error)", keepingNewlines: true))\n".utf8))
            return 2
        }
        print(TerminalText.escaped(EverythingVerification.table(runs), keepingNewlines: true), terminator: "")
        let passed = runs.allSatisfy(\.result.passed)
        do throws(VerifyError) {
            if let json { try writeEverythingJSON(runs, passed: passed, to: json, inputs: inputs) }
            if let junit { try ReportFiles.write(Array(Self.everythingJUnit(runs).utf8), to: junit, option: "--junit", inputs: inputs) }
            if let report { try writeEverythingPictures(runs, to: report, inputs: inputs) }
        } catch {
            FileHandle.standardError.write(Data("samverify: \(TerminalText.escaped(error.message, keepingNewlines: true))\n".utf8))
            return error.exitCode
        }
        return passed ? 0 : 1
    }

    private func writeEverythingJSON(_ runs: [EverythingVerification.ImageRun], passed: Bool, to path: String,
                                     inputs: [String]) throws(VerifyError) {
        struct Report: Encodable {
            var tool = "samverify"
            var kind = AutomaticMaskReferenceSet.kind
            var status: String
            var requiredFraction = EverythingVerification.requiredFraction
            var iouThreshold = EverythingVerification.iouThreshold
            var images: [EverythingVerification.ImageResult]
            enum CodingKeys: String, CodingKey {
                case tool, kind, status, images
                case requiredFraction = "required_fraction", iouThreshold = "iou_threshold"
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do { data = try encoder.encode(Report(status: passed ? "pass" : "fail", images: runs.map(\.result))) } catch {
            throw VerifyError(.writeFailed, "--json \(path): cannot encode: \(error)")
        }
        try ReportFiles.write(Array(data) + [0x0A], to: path, option: "--json", inputs: inputs)
    }

    /// One test case per photo; a failure lists the unmatched masks.
    static func everythingJUnit(_ runs: [EverythingVerification.ImageRun]) -> String {
        let failures = runs.filter { !$0.result.passed }.count
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
            + "<testsuites name=\"samverify\" tests=\"\(runs.count)\" failures=\"\(failures)\" errors=\"0\">\n"
            + "  <testsuite name=\"segment everything\" tests=\"\(runs.count)\" failures=\"\(failures)\" errors=\"0\">\n"
        for run in runs {
            let r = run.result
            xml += "    <testcase classname=\"everything\" name=\"\(JUnitReport.escape(r.name))\" time=\"\(String(format: "%.3f", r.seconds))\">"
            if !r.passed {
                let message = "matched \(r.matched): \(String(format: "%.1f", 100 * r.nativeMatchedFraction))% of \(r.nativeMasks) native, "
                    + "\(String(format: "%.1f", 100 * r.referenceMatchedFraction))% of \(r.referenceMasks) upstream; unmatched native "
                    + "\(r.unmatchedNative), upstream \(r.unmatchedReference)"
                xml += "\n      <failure message=\"\(JUnitReport.escape(message))\"/>\n    "
            }
            xml += "</testcase>\n"
        }
        return xml + "  </testsuite>\n</testsuites>\n"
    }

    /// `DIR/<image>.png`: the photo with unmatched native masks in red and unmatched upstream masks in
    /// blue; `DIR/index.html` lists every photo with its figures.
    private func writeEverythingPictures(_ runs: [EverythingVerification.ImageRun], to folder: String,
                                         inputs: [String]) throws(VerifyError) {
        var rows = ""
        for (index, run) in runs.enumerated() {
            let name = String(format: "image_%03d.png", index)
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                try ImageIO.writePNG(EverythingVerification.unmatchedPicture(run), to: folder + "/" + name,
                                     policy: OutputPolicy(existing: .replace, inputs: inputs, option: "--report"))
            } catch {
                throw VerifyError(.writeFailed, "--report \(folder): \(error)")
            }
            let r = run.result
            rows += "<tr><td>\(JUnitReport.escape(r.name))</td><td>\(r.nativeMasks)</td><td>\(r.referenceMasks)</td><td>\(r.matched)</td>"
                + "<td>\(r.unmatchedNative.count)</td><td>\(r.unmatchedReference.count)</td><td>\(String(format: "%.5f", r.iouMin))</td>"
                + "<td>\(r.passed ? "PASS" : "FAIL")</td><td><img src=\"\(name)\" width=\"480\"></td></tr>\n"
        }
        let html = "<!doctype html><meta charset=\"utf-8\"><title>samverify: segment everything</title>\n"
            + "<p>Native masks no upstream mask matched (IoU &ge; \(EverythingVerification.iouThreshold)) are red; upstream masks no native "
            + "mask matched are blue.</p>\n<table border=\"1\" cellpadding=\"4\"><tr><th>image</th><th>native</th><th>upstream</th>"
            + "<th>matched</th><th>unmatched native</th><th>unmatched upstream</th><th>IoU min</th><th>status</th><th>unmatched</th></tr>\n"
            + rows + "</table>\n"
        try ReportFiles.write(Array(html.utf8), to: folder + "/index.html", option: "--report", inputs: inputs)
    }
}
