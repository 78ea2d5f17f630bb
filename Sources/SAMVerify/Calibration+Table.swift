/// The calibration for people.
extension Calibration {
    public var table: String {
        var lines = ["samverify --calibrate: \(model) against \(references)",
                     "  \(blas)",
                     "  suggested = \(formatFigure(margin))x the worst figure, rounded \(rounding); defaults \(defaults)", ""]
        let header = ["OUTPUT", "CASES", "MAX ABS", "WORST CASE", "MAX REL (|REF|>=1)", "ATOL", "RTOL"]
        var rows = [header]
        for envelope in outputs {
            rows.append([envelope.name, String(envelope.samples), formatFigure(envelope.maxAbs), envelope.worstCase,
                         envelope.maxRelAtLeastOne.map(formatFigure) ?? "-", formatFigure(envelope.atol),
                         envelope.rtol.map(formatFigure) ?? "-"])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            lines.append(row.enumerated().map { column, text in
                column == row.count - 1 ? text : text.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  "))
        }
        lines.append("")
        lines.append("set-wide: atol \(formatFigure(atol)), rtol \(formatFigure(rtol)) (defaults: atol \(formatFigure(defaults.atol)), "
                     + "rtol \(formatFigure(defaults.rtol)))")
        if !modules.isEmpty {
            let worst = modules.max { $0.maxAbs < $1.maxAbs }!
            lines.append("modules: \(modules.count) envelopes, worst \(worst.name) max abs \(formatFigure(worst.maxAbs)) "
                         + "(\(worst.worstCase)) -> atol \(formatFigure(worst.atol)); loosest module atol "
                         + formatFigure(modules.map(\.atol).max() ?? 0))
        }
        lines.append("task level over \(task.prompts) prompts: min mask IoU \(task.minMaskIoU.map(formatIoU) ?? "-"), "
                     + "IoU prediction error \(task.maxIoUPredictionError.map(formatFigure) ?? "-"), "
                     + "area difference \(task.maxAreaDifference.map(formatFigure) ?? "-"), "
                     + "best mask differs in \(task.bestMaskDisagreements) -> \(task.thresholds)")
        return lines.joined(separator: "\n") + "\n"
    }
}
