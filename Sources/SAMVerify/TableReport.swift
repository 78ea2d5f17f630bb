import Foundation

/// The report for people: one row per case and output, then what failed, was bad input or not
/// applicable, and where failing runs first diverge.
public enum TableReport {
    public static func render(_ report: VerificationReport) -> String {
        var lines: [String] = []
        lines.append("samverify \(report.version): \(report.model.path) against \(report.references.given)")
        lines.append("  model: \(report.model.components.joined(separator: ", "))"
                     + (report.model.weightDType.map { " (\($0) weights)" } ?? "")
                     + (report.model.maskPath ? "" : "; no mask path"))
        lines.append("  references: \(report.references.root) (\(report.references.layout))")
        lines.append("  rule: \(report.rule)")
        lines.append("  tolerances: defaults \(report.defaults)"
                     + (report.commandLineAtol.map { "; --atol \(formatFigure($0))" } ?? "")
                     + (report.commandLineRtol.map { "; --rtol \(formatFigure($0))" } ?? "")
                     + (report.maxAtol.map { "; --max-atol \(formatFigure($0))" } ?? "")
                     + (report.maxRtol.map { "; --max-rtol \(formatFigure($0))" } ?? "")
                     + "; min atol / min rtol below are the smallest that pass with the other at its setting")
        lines.append("  manifest tolerances: " + (report.manifestTolerances.isEmpty ? "none"
                     : report.manifestTolerances.map(\.description).joined(separator: "; ")))
        lines.append("  \(report.decoderInputs)")
        if let precision = report.linearPrecision {
            lines.append("  linear layers: \(precision) products (--bf16, the opt-in lower-precision path): judge it by the task level")
        }
        if let weightDType = report.model.weightDType, weightDType == "int8" || weightDType == "q4" {
            lines.append("  weights: \(weightDType) (samconvert --dtype \(weightDType)): tensors miss float32's tolerances by design; "
                         + "judge it by the task level")
        }
        lines.append("")

        let header = ["CASE", "OUTPUT", "STATUS", "MAX ABS", "MEAN ABS", "MEDIAN ABS", "MAX REL", "MEDIAN REL",
                      "MIN ATOL", "MIN RTOL", "WORST INDEX", "ATOL/RTOL"]
        var rows: [[String]] = [header]
        for (result, check) in report.checks {
            let figures = check.figures
            rows.append([
                result.name, check.output, statusText(check.status),
                figures.map { formatFigure($0.maxAbs) } ?? "-",
                figures.map { formatFigure($0.meanAbs) } ?? "-",
                figures.map { formatFigure($0.medianAbs) } ?? "-",
                figures.map { formatFigure($0.maxRel) } ?? "-",
                figures.map { formatFigure($0.medianRel) } ?? "-",
                figures.map { formatFigure($0.minPassingAtol) } ?? "-",
                figures.map { formatFigure($0.minPassingRtol) } ?? "-",
                figures.map { formatIndex($0.worstIndex) } ?? "-",
                "\(formatFigure(check.tolerance.atol))/\(formatFigure(check.tolerance.rtol))",
            ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            lines.append(row.enumerated().map { column, text in
                column == row.count - 1 ? text : text.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  "))
        }

        var notes: [String] = []
        for (result, check) in report.checks where check.status != .pass {
            var text = "\(result.name) \(check.output) [\(statusText(check.status))]: "
            if let problem = check.problem { text += problem }
            if let figures = check.figures, !figures.passes {
                if check.problem != nil { text += "; " }
                text += "\(figures.failing) of \(figures.count) elements outside atol \(formatFigure(check.tolerance.atol)) "
                    + "and rtol \(formatFigure(check.tolerance.rtol)) (first at \(formatIndex(figures.firstFailingIndex ?? [])), "
                    + "worst at \(formatIndex(figures.worstIndex)): \(formatFigure(figures.worstOutput)) vs reference "
                    + "\(formatFigure(figures.worstReference)))"
            }
            notes.append(text)
        }
        let commonSources: Set<String> = ["default", "command line"]
        for result in report.cases {
            let fromManifest = result.outputs.filter {
                !commonSources.contains($0.tolerance.atolSource) || !commonSources.contains($0.tolerance.rtolSource)
            }
            let sources = Set(fromManifest.map {
                "atol \(formatFigure($0.tolerance.atol)) from \($0.tolerance.atolSource), rtol \(formatFigure($0.tolerance.rtol)) from \($0.tolerance.rtolSource)"
            })
            if !sources.isEmpty { notes.append("\(result.name): tolerances " + sources.sorted().joined(separator: "; ")) }
        }
        if !notes.isEmpty {
            lines.append("")
            lines += notes
        }

        let divergences = report.cases.compactMap { result in result.divergence.map { (result.name, $0) } }
        if !divergences.isEmpty {
            lines.append("")
            for (name, divergence) in divergences {
                if divergence.located {
                    lines.append("FIRST DIVERGENCE in \(name) (\(divergence.run)): \(divergence.summary)")
                    lines.append("  \(divergence.note)")
                } else {
                    lines.append("no module named for \(name) (\(divergence.run)): \(divergence.note)")
                }
            }
        }

        lines += taskLines(report)
        if let determinism = report.determinism { lines += determinismLines(determinism) }

        let counts = report.counts, tasks = report.taskCounts
        lines.append("")
        lines.append("\(counts.checks) checks: \(counts.passed) passed, \(counts.failed) failed, \(counts.badInput) bad input, "
                     + "\(counts.notApplicable) not applicable"
                     + (counts.missing > 0 ? " (\(counts.missing) of them a missing reference output)" : "")
                     + (tasks.cases == 0 ? "" : "; task level \(tasks.cases) cases: \(tasks.passed) passed, \(tasks.failed) failed"
                        + (tasks.failedWithTensorsPassing > 0 ? " (\(tasks.failedWithTensorsPassing) with every tensor within tolerance)" : "")
                        + (tasks.badInput > 0 ? ", \(tasks.badInput) bad input" : "")
                        + (tasks.notApplicable > 0 ? ", \(tasks.notApplicable) not applicable" : ""))
                     + (report.determinism.map { "; determinism \($0.status == .pass ? "pass" : "FAIL")" } ?? "")
                     + " -> \(report.status.uppercased()) (exit \(report.exitCode))")
        if counts.passed + counts.failed == 0 && counts.badInput == 0 {
            lines.append("nothing was verified: every selected check is not applicable to this model")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func statusText(_ status: CheckStatus) -> String {
        switch status {
        case .pass: "pass"
        case .fail: "FAIL"
        case .notApplicable: "n/a"
        case .badInput: "BAD INPUT"
        }
    }
}
