import ArgumentParser
import Foundation
import SAMFiles

extension ParsableCommand {
    /// Parses `arguments` (the process's own when nil), runs the command and exits with the tools'
    /// contract (README, "Exit statuses"): 0 when it returns, the status an `ExitCode` it throws
    /// carries, 2 for any other error, usage errors included (ArgumentParser's own would exit 64);
    /// --help and --version print and exit 0.
    public static func mainExitingWithToolStatus(_ arguments: [String]? = nil) -> Never {
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch let code as ExitCode {
            Foundation.exit(code.rawValue)
        } catch {
            if exitCode(for: error) == .success { exit(withError: error) }  // --help, --version
            // Messages quote paths and text from the inputs: escaped, so a file name cannot drive the terminal.
            FileHandle.standardError.write(Data((TerminalText.escaped(fullMessage(for: error), keepingNewlines: true) + "\n").utf8))
            Foundation.exit(2)
        }
        Foundation.exit(0)
    }
}
