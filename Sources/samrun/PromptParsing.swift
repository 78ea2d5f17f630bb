import SAMPipeline

/// `--point X,Y[,LABEL]` and `--box X0,Y0,X1,Y1`, strictly: numbers only, the right count.
/// Negative coordinates parse (and are then refused as outside the image, with its size).
enum PromptParsing {
    static func point(_ text: String) throws(RunFailure) -> Prompt.Point {
        let values = try numbers(text, option: "--point", counts: [2, 3])
        guard values[0].isFinite, values[1].isFinite else { throw RunFailure("--point '\(text)': coordinates must be finite") }
        var label = 1
        if values.count == 3 {
            guard values[2] == 0 || values[2] == 1 else { throw RunFailure("--point '\(text)': LABEL must be 1 (foreground) or 0 (background)") }
            label = Int(values[2])
        }
        return Prompt.Point(x: values[0], y: values[1], label: label)
    }

    static func box(_ text: String) throws(RunFailure) -> Prompt.Box {
        let values = try numbers(text, option: "--box", counts: [4])
        return Prompt.Box(x0: values[0], y0: values[1], x1: values[2], y1: values[3])
    }

    private static func numbers(_ text: String, option: String, counts: [Int]) throws(RunFailure) -> [Float] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let values = parts.compactMap { Float($0) }
        guard values.count == parts.count, counts.contains(values.count) else {
            let shape = counts == [4] ? "X0,Y0,X1,Y1" : "X,Y or X,Y,LABEL"
            throw RunFailure("\(option) '\(text)' is not \(shape)")
        }
        return values
    }
}

import Foundation
