import Foundation
import SAMFiles
import SAMFormats

/// Progress goes to standard error, so standard output carries only the summary.
enum ConsoleProgress {
    /// Names from files reach these lines (inputs, tensors): printed escaped (`TerminalText`).
    static func step(_ message: String) { write("samconvert: \(message)") }
    static func error(_ message: String) { write(message) }

    private static func write(_ line: String) {
        FileHandle.standardError.write(Data((TerminalText.escaped(line, keepingNewlines: true) + "\n").utf8))
    }
}
