import Foundation
import SAMTestSupport
import Testing

/// `CommandLineTool.run` must take in all a tool writes on both streams: a tool that fills the stderr
/// pipe (64 KB on Linux) while the harness waits for the end of its stdout would block forever.
@Suite("Command-line harness: run drains stdout and stderr together")
struct CommandLineRunTests {
    @Test("A program writing 200 KB to stderr before a line of stdout: both read whole, the run ends")
    func largeStderrBeforeStdout() throws {
        let line = "a line of stderr, forty-nine bytes with its end.."
        let shell = CommandLineTool(path: "/bin/sh")
        let run = try shell.run(["-c", "i=0; while [ $i -lt 4000 ]; do echo '\(line)' >&2; i=$((i+1)); done; echo done"])
        #expect(run.status == 0 && !run.crashed, "\(run.stderr.suffix(200))")
        #expect(run.stdout == "done\n")
        #expect(run.stderr.utf8.count == 4000 * (line.utf8.count + 1) && run.stderr.hasSuffix(line + "\n"))
    }
}
