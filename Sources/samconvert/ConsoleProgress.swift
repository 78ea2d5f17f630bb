import Foundation

/// Progress goes to standard error, so standard output carries only the summary.
enum ConsoleProgress {
    static func step(_ message: String) { FileHandle.standardError.write(Data("samconvert: \(message)\n".utf8)) }
    static func error(_ message: String) { FileHandle.standardError.write(Data("\(message)\n".utf8)) }
}
