/// The report's `index.html`: the run's outcome, the cases that need attention first, then every case
/// with its figures and its pictures (each a link to the full PNG).
extension PictureReport {
    func html(_ report: VerificationReport) -> String {
        var body: [String] = []
        body.append("<h1>samverify: \(escape(report.model.path)) against \(escape(report.references.given))</h1>")
        body.append("<p class=\"\(report.exitCode == 0 ? "pass" : "fail")\">\(escape(report.status.uppercased())) (exit \(report.exitCode)): "
                    + "\(report.counts.checks) tensor checks, \(report.counts.passed) passed, \(report.counts.failed) failed, "
                    + "\(report.counts.badInput) bad input, \(report.counts.notApplicable) not applicable; task level "
                    + "\(report.taskCounts.cases) cases, \(report.taskCounts.passed) passed, \(report.taskCounts.failed) failed</p>")
        body.append("<p>Tensor rule: \(escape(report.rule)). Task level: \(escape(report.taskThresholds.description)).</p>")
        let anchors = Dictionary(pictures.enumerated().map { ($0.element.name, "case-\($0.offset)") }, uniquingKeysWith: { first, _ in first })
        let attention = report.cases.filter { $0.status != .pass }
        if !attention.isEmpty {
            body.append("<h2>Cases that did not pass</h2><ul>")
            for result in attention {
                let anchor = anchors[result.name].map { "<a href=\"#\($0)\">\(escape(result.name))</a>" } ?? escape(result.name)
                body.append("<li>\(anchor): \(escape(result.status.rawValue))"
                            + (result.task.map { " &mdash; " + escape($0.failures.first ?? $0.summary) } ?? "") + "</li>")
            }
            body.append("</ul>")
        }
        if let determinism = report.determinism {
            body.append("<h2>Determinism <span class=\"\(determinism.status == .pass ? "pass" : "fail")\">"
                        + "\(escape(determinism.status.rawValue))</span></h2><p>\(escape(determinism.rule))</p><ul>")
            for difference in determinism.differences {
                body.append("<li>\(escape(difference.status.rawValue)): \(escape(difference.configuration)) vs "
                            + "\(escape(difference.against)) [\(escape(difference.kind))]: \(escape(difference.note))</li>")
            }
            body.append("</ul>")
        }
        for (index, entry) in pictures.enumerated() {
            guard let result = report.cases.first(where: { $0.name == entry.name }) else { continue }
            body.append("<section id=\"case-\(index)\"><h2>\(escape(result.name)) <span class=\"\(result.status == .pass ? "pass" : "fail")\">"
                        + "\(escape(result.status.rawValue))</span></h2>")
            if let task = result.task {
                body.append("<p>Task level (\(escape(task.run))): \(escape(task.status.rawValue)), \(escape(task.summary))</p>")
                if !task.failures.isEmpty {
                    body.append("<ul>" + task.failures.prefix(10).map { "<li>\(escape($0))</li>" }.joined() + "</ul>")
                }
            }
            body.append("<table><tr><th>output</th><th>status</th><th>max abs</th><th>atol / rtol</th></tr>")
            for check in result.outputs {
                body.append("<tr><td>\(escape(check.output))</td><td>\(escape(check.status.rawValue))</td>"
                            + "<td>\(check.figures.map { formatFigure($0.maxAbs) } ?? escape(check.problem ?? "-"))</td>"
                            + "<td>\(formatFigure(check.tolerance.atol)) / \(formatFigure(check.tolerance.rtol))</td></tr>")
            }
            body.append("</table>")
            for (file, caption) in entry.files {
                body.append("<figure><a href=\"\(escape(file))\"><img src=\"\(escape(file))\" alt=\"\(escape(caption))\"></a>"
                            + "<figcaption>\(escape(caption))</figcaption></figure>")
            }
            if entry.files.isEmpty { body.append("<p>No pictures: nothing could be compared for this case.</p>") }
            body.append("</section>")
        }
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>samverify report</title>
            <style>body{font-family:sans-serif;margin:1.5em}img{max-width:100%;image-rendering:pixelated;border:1px solid #999}\
            figure{margin:0.5em 0}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}\
            .pass{color:#070}.fail{color:#b00;font-weight:bold}</style></head>
            <body>
            \(body.joined(separator: "\n"))
            </body></html>

            """
    }

    func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
