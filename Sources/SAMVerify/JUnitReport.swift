import Foundation
import SAMFiles
import SAMFormats

/// JUnit XML for CI: one testsuite per run, one testcase per case and output, one `task` testcase per
/// case with a task-level check, one per determinism configuration. A failure carries the figures and
/// the case's first diverging module; bad input is an error; not applicable is skipped.
public enum JUnitReport {
    public static func render(_ report: VerificationReport) -> String {
        let counts = report.counts, tasks = report.taskCounts
        let determinism = report.determinism?.differences ?? []
        let time = report.cases.reduce(0) { $0 + $1.seconds }
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        let failures = counts.failed + tasks.failed + determinism.filter { $0.status == .fail }.count
        let suiteAttributes = "tests=\"\(counts.checks + tasks.cases + determinism.count)\" failures=\"\(failures)\" "
            + "errors=\"\(counts.badInput + tasks.badInput)\" skipped=\"\(counts.notApplicable + tasks.notApplicable)\" "
            + "time=\"\(seconds(time))\""
        xml += "<testsuites name=\"samverify\" \(suiteAttributes)>\n"
        xml += "  <testsuite name=\"\(escape("samverify: \(report.references.given)"))\" \(suiteAttributes)>\n"
        xml += "    <properties>\n"
        var properties: [(String, String)] = [
            ("model", report.model.path), ("references", report.references.root), ("layout", report.references.layout),
            ("rule", report.rule), ("default_atol", formatFigure(report.defaults.atol)),
            ("default_rtol", formatFigure(report.defaults.rtol)), ("decoder_inputs", report.decoderInputs),
        ]
        let optional: [(String, Double?)] = [("atol", report.commandLineAtol), ("rtol", report.commandLineRtol),
                                             ("max_atol", report.maxAtol), ("max_rtol", report.maxRtol)]
        for (name, value) in optional {
            if let value { properties.append((name, formatFigure(value))) }
        }
        let manifest: String = report.manifestTolerances.isEmpty ? "none" : report.manifestTolerances.map(\.description).joined(separator: "; ")
        properties.append(("manifest_tolerances", manifest))
        properties.append(("task_thresholds", report.taskThresholds.description))
        properties.append(("task_min_mask_iou", String(report.taskThresholds.minMaskIoU)))
        properties.append(("task_require_best_mask", String(report.taskThresholds.requireBestMask)))
        properties.append(("task_masks", report.taskThresholds.masks.rawValue))
        for (name, value) in properties {
            xml += "      <property name=\"\(escape(name))\" value=\"\(escape(value))\"/>\n"
        }
        xml += "    </properties>\n"
        for (result, check) in report.checks {
            xml += "    <testcase classname=\"samverify.\(escape(result.name))\" name=\"\(escape(check.output))\" "
                + "time=\"\(seconds(check.seconds))\""
            switch check.status {
            case .pass:
                xml += "/>\n"
                continue
            case .notApplicable:
                xml += ">\n      <skipped message=\"\(escape("not applicable: " + (check.problem ?? "")))\"/>\n"
            case .badInput:
                xml += ">\n      <error type=\"bad_input\" message=\"\(escape(check.problem ?? "bad input"))\">"
                    + escape(details(result, check)) + "</error>\n"
            case .fail:
                xml += ">\n      <failure type=\"mismatch\" message=\"\(escape(failureMessage(check)))\">"
                    + escape(details(result, check)) + "</failure>\n"
            }
            xml += "    </testcase>\n"
        }
        for result in report.cases {
            guard let task = result.task else { continue }
            xml += "    <testcase classname=\"samverify.\(escape(result.name))\" name=\"task\" time=\"0.000\""
            switch task.status {
            case .pass:
                xml += "/>\n"
                continue
            case .notApplicable:
                xml += ">\n      <skipped message=\"\(escape("not applicable: " + (task.problem ?? "")))\"/>\n"
            case .badInput:
                xml += ">\n      <error type=\"bad_input\" message=\"\(escape(task.problem ?? "bad input"))\"/>\n"
            case .fail:
                let tensors = result.outputs.allSatisfy { $0.status == .pass }
                let message = (tensors ? "every tensor within tolerance, but " : "") + (task.failures.first ?? "task level failure")
                xml += ">\n      <failure type=\"task_mismatch\" message=\"\(escape(message))\">"
                    + escape(taskDetails(result, task)) + "</failure>\n"
            }
            xml += "    </testcase>\n"
        }
        for difference in determinism {
            xml += "    <testcase classname=\"samverify.determinism\" name=\"\(escape(difference.configuration))\" time=\"0.000\""
            if difference.status == .pass {
                xml += "/>\n"
                continue
            }
            xml += ">\n      <failure type=\"nondeterministic\" message=\"\(escape(difference.note))\"/>\n    </testcase>\n"
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    /// The task-level figures and every threshold missed, as plain text.
    static func taskDetails(_ result: CaseResult, _ task: TaskParity) -> String {
        var lines = ["case \(result.name), task level: \(task.run)", "thresholds: \(task.thresholds)", task.summary]
        if let margin = task.smallestReferenceMargin { lines.append("smallest reference best-mask margin \(formatFigure(margin))") }
        lines += task.failures
        return lines.joined(separator: "\n")
    }

    static func failureMessage(_ check: OutputCheck) -> String {
        if let problem = check.problem { return problem }
        guard let figures = check.figures else { return "mismatch" }
        return "\(figures.failing) of \(figures.count) elements outside atol \(formatFigure(check.tolerance.atol)) "
            + "and rtol \(formatFigure(check.tolerance.rtol)); max abs \(formatFigure(figures.maxAbs)) at \(formatIndex(figures.worstIndex))"
    }

    /// The figures and the first diverging module, as plain text.
    static func details(_ result: CaseResult, _ check: OutputCheck) -> String {
        var lines = ["case \(result.name), output \(check.output) (\(check.path) path), reference \(check.reference)"]
        if let problem = check.problem { lines.append(problem) }
        if let shape = check.shape, let referenceShape = check.referenceShape {
            lines.append("shape \(formatIndex(shape)) \(check.dtype ?? "?"), reference \(formatIndex(referenceShape)) \(check.referenceDType ?? "?")")
        }
        lines.append("tolerance atol \(formatFigure(check.tolerance.atol)) (\(check.tolerance.atolSource)), "
                     + "rtol \(formatFigure(check.tolerance.rtol)) (\(check.tolerance.rtolSource))")
        if let figures = check.figures {
            lines.append("abs error: max \(formatFigure(figures.maxAbs)), mean \(formatFigure(figures.meanAbs)), median \(formatFigure(figures.medianAbs))")
            lines.append("rel error: max \(formatFigure(figures.maxRel)), mean \(formatFigure(figures.meanRel)), median \(formatFigure(figures.medianRel))")
            lines.append("smallest passing atol \(formatFigure(figures.minPassingAtol)), smallest passing rtol \(formatFigure(figures.minPassingRtol))")
            lines.append("failing elements \(figures.failing) of \(figures.count), non-finite \(figures.nonFinite); worst at "
                         + "\(formatIndex(figures.worstIndex)): \(formatFigure(figures.worstOutput)) vs \(formatFigure(figures.worstReference))")
        }
        if let divergence = result.divergence {
            lines.append(divergence.located ? "first diverging module: \(divergence.summary)" : "first diverging module: none named: \(divergence.note)")
        }
        return lines.joined(separator: "\n")
    }

    static func seconds(_ value: Double) -> String { String(format: "%.3f", value) }

    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n": out += "&#10;"
            case "\t", "\r": out += "&#\(scalar.value);"
            default:
                // XML 1.0 forbids most control characters even as references.
                if scalar.value < 0x20 { out += "?" } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }
}

/// Writes the machine-readable reports, each through a temporary file renamed into place. What may
/// stand at a report's name is `OutputRule`'s: nothing or a regular file, never the model or a file of
/// the reference set (`inputs`).
public enum ReportFiles {
    /// The files a run reads, which no report may replace: the model and every file under the
    /// reference set's folder (links followed to what they name).
    public static func inputs(model: String, references: String) -> [String] {
        var files = [model, references]
        if let walker = FileManager.default.enumerator(atPath: references) {
            var count = 0
            while let relative = walker.nextObject() as? String, count < 100_000 {
                files.append(references + "/" + relative)
                count += 1
            }
        }
        return files
    }

    /// Checks, before any work, that the reports may be written where asked (touching nothing).
    public static func checkOutputs(json: String?, junit: String?, inputs: [String]) throws(VerifyError) {
        if let json, let junit, json == junit || (FileIdentity(path: json) != nil && FileIdentity(path: json) == FileIdentity(path: junit)) {
            throw VerifyError(.outputRefused, "--json and --junit name the same file \(json); nothing was written")
        }
        for (option, path) in [("--json", json), ("--junit", junit)] {
            guard let path else { continue }
            try checkOutput(path, option: option, inputs: inputs)
        }
    }

    /// One report's name: what stands there (`OutputRule`), and a folder that exists or can be made
    /// (its nearest existing ancestor a directory this process may write), so a run never ends on an
    /// output it cannot write. Touches nothing.
    public static func checkOutput(_ path: String, option: String, inputs: [String]) throws(VerifyError) {
        do { try OutputRule.check(path, OutputPolicy(existing: .replace, inputs: inputs, option: option)) } catch {
            throw VerifyError(.outputRefused, error.message)
        }
        var folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        while true {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
                guard isDirectory.boolValue else {
                    throw VerifyError(.outputRefused, "\(option) \(path): \(folder.path) is not a folder (nothing was written)")
                }
                guard access(folder.path, W_OK | X_OK) == 0 else {
                    throw VerifyError(.outputRefused, "\(option) \(path): cannot write in \(folder.path): "
                                      + "\(String(cString: strerror(errno))) (nothing was written)")
                }
                return
            }
            let parent = folder.deletingLastPathComponent()
            if parent.path == folder.path { return }
            folder = parent
        }
    }

    public static func writeJSON(_ report: VerificationReport, to path: String, inputs: [String] = []) throws(VerifyError) {
        let data: Data
        do { data = try report.jsonData() } catch { throw VerifyError(.writeFailed, "--json \(path): cannot encode: \(error)") }
        try write(Array(data) + [0x0A], to: path, option: "--json", inputs: inputs)
    }

    public static func writeJUnit(_ report: VerificationReport, to path: String, inputs: [String] = []) throws(VerifyError) {
        try write(Array(JUnitReport.render(report).utf8), to: path, option: "--junit", inputs: inputs)
    }

    /// A report for a run that could not start (bad input or usage), so CI still finds a file; not
    /// written where the output rule forbids it.
    public static func writeError(_ error: VerifyError, json: String?, junit: String?, inputs: [String] = []) {
        if error.code == .outputRefused { return }
        if let json {
            let body: [String: String] = ["tool": "samverify", "status": "bad_input", "error": error.message, "code": error.code.rawValue]
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            if let data = try? encoder.encode(body) { try? write(Array(data) + [0x0A], to: json, option: "--json", inputs: inputs) }
        }
        if let junit {
            let xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
                + "<testsuites name=\"samverify\" tests=\"1\" failures=\"0\" errors=\"1\">\n"
                + "  <testsuite name=\"samverify\" tests=\"1\" failures=\"0\" errors=\"1\">\n"
                + "    <testcase classname=\"samverify\" name=\"setup\">\n"
                + "      <error type=\"\(JUnitReport.escape(error.code.rawValue))\" message=\"\(JUnitReport.escape(error.message))\"/>\n"
                + "    </testcase>\n  </testsuite>\n</testsuites>\n"
            try? write(Array(xml.utf8), to: junit, option: "--junit", inputs: inputs)
        }
    }

    public static func write(_ bytes: [UInt8], to path: String, option: String, inputs: [String]) throws(VerifyError) {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        if !FileManager.default.fileExists(atPath: folder) {
            do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
                throw VerifyError(.writeFailed, "\(option) \(path): cannot create \(folder): \(error)")
            }
        }
        do { try AtomicFile.write(bytes, to: path, policy: OutputPolicy(existing: .replace, inputs: inputs, option: option)) } catch {
            if error.code == .outputRefused { throw VerifyError(.outputRefused, error.message) }
            throw VerifyError(.writeFailed, "\(option) \(path): \(error)")
        }
    }
}
