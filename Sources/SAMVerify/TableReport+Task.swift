/// The task-level and determinism sections of the table.
extension TableReport {
    /// One row per case with a task-level check, then every threshold missed.
    static func taskLines(_ report: VerificationReport) -> [String] {
        let results = report.cases.filter { $0.task != nil }
        guard !results.isEmpty else { return [] }
        var lines = ["", "task level (thresholded full-size masks, native against reference): \(report.taskThresholds)"]
        let header = ["CASE", "RUN", "STATUS", "PROMPTS", "MIN MASK IOU", "BEST MASK (NATIVE/REF)", "REF MARGIN",
                      "IOU PRED ERR", "AREA DIFF"]
        var rows = [header]
        for result in results {
            let task = result.task!
            let single = task.prompts.count == 1 ? task.prompts.first : nil
            let best: String
            if let single {
                best = "\(single.nativeBest)/\(single.referenceBest)" + (single.bestAgrees ? "" : " DIFFERS")
            } else if task.prompts.isEmpty {
                best = "-"
            } else {
                best = "agree \(task.bestMaskAgreements)/\(task.prompts.count)"
            }
            rows.append([
                result.name, result.kind == .imageEncoder ? "end to end" : "official", statusText(task.status),
                task.prompts.isEmpty ? "-" : String(task.prompts.count),
                task.minMaskIoU.map(formatIoU) ?? "-", best,
                task.smallestReferenceMargin.map(formatFigure) ?? "-",
                task.maxIoUPredictionError.map(formatFigure) ?? "-",
                task.maxAreaDifference.map(formatFigure) ?? "-",
            ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            lines.append(row.enumerated().map { column, text in
                column == row.count - 1 ? text : text.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  "))
        }
        if let cost = report.precisionCost { lines += [""] + cost.lines }
        var notes: [String] = []
        for result in results {
            let task = result.task!
            if task.status == .fail {
                let tensors = result.outputs.allSatisfy { $0.status == .pass }
                notes.append("TASK FAILURE in \(result.name) (\(task.run))"
                             + (tensors ? ": every tensor is within tolerance, the masks are not" : "") + ":")
                notes += task.failures.prefix(10).map { "  \($0)" }
                if task.failures.count > 10 { notes.append("  ... \(task.failures.count - 10) more") }
            } else if let problem = task.problem, task.status != .pass || result.kind == .imageEncoder {
                notes.append("\(result.name) task level [\(statusText(task.status))]: \(problem)")
            }
        }
        if let frame = results.compactMap(\.task?.frame).first {
            notes.append("masks brought to \(frame.originalSize.height)x\(frame.originalSize.width) (HxW, from \(frame.source); "
                         + "input \(frame.inputSize.height)x\(frame.inputSize.width) in the \(frame.imageSize) square) "
                         + "as Sam.postprocess_masks does, thresholded at the set's mask_threshold")
        }
        if !notes.isEmpty { lines += [""] + notes }
        return lines
    }

    static func determinismLines(_ determinism: DeterminismReport) -> [String] {
        var lines = ["", "determinism (\(determinism.rule)):"]
        for configuration in determinism.configurations {
            lines.append("  \(configuration.label): workers \(configuration.workers.map(String.init) ?? "?"), "
                         + "\(configuration.blas ?? "BLAS unknown"); its run exits \(configuration.exitCode)"
                         + (configuration.label == determinism.baseline ? " (baseline)" : ""))
        }
        for difference in determinism.differences {
            lines.append("  \(statusText(difference.status)) \(difference.configuration) vs \(difference.against) "
                         + "[\(difference.kind)]: \(difference.note)")
        }
        let threads = determinism.threadDifferences
        let kernels = determinism.differences.filter { $0.kind == "kernel path" }
        func cores(_ differences: [DeterminismReport.Difference]) -> String {
            var seen: [String] = []
            for core in differences.map({ $0.core ?? "?" }) where !seen.contains(core) { seen.append(core) }
            return seen.joined(separator: ", ")
        }
        let identical = threads.filter { $0.elementsDiffering == 0 && $0.maskCasesDiffering == 0 }
        let excused = threads.filter { $0.status == .pass && $0.exception != nil }
        let failing = threads.filter { $0.status != .pass }
        var parts: [String] = []
        if !identical.isEmpty { parts.append("bit-identical on \(cores(identical)) kernels") }
        if !excused.isEmpty { parts.append("a repeatable difference within its bound on \(cores(excused)) kernels (the exception above)") }
        if !failing.isEmpty { parts.append("OUTPUTS DIFFER on \(cores(failing)) kernels") }
        var verdict = "  -> thread counts: " + (threads.isEmpty ? "one only" : parts.joined(separator: "; "))
        if !kernels.isEmpty {
            verdict += "; kernel paths: " + (kernels.allSatisfy { $0.status == .pass } ? "within their bound" : "OUTSIDE their bound")
        }
        lines.append(verdict)
        return lines
    }
}
