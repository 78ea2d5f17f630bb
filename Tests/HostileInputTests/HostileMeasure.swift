import Foundation
import SAMTestSupport
import Testing

/// One hostile run and what it must show: exit 1 or 2 (or the status given), no signal, within
/// `seconds` and `megabytes` of peak resident memory, a message naming the file and the limit (every
/// string of `mentions`), nothing at `output`. Runs are measured by the kernel (/proc VmHWM) and
/// killed at 30 s, so a hang fails the test instead of stalling the suite.
struct HostileRun {
    var label: String
    var tool: CommandLineTool
    var arguments: [String]
    var mentions: [String] = []
    var output: String? = nil
    var expected: Set<Int32> = [1, 2]
    var seconds = 5.0
    var megabytes = 200.0

    @discardableResult
    func check(sourceLocation: SourceLocation = #_sourceLocation) throws -> CommandLineTool.MeasuredRun {
        let run = try tool.measured(arguments, timeout: 30)
        HostileTable.record(label, tool: tool.name, run)
        let context = "\(tool.name) \(label): exit \(run.status), \(String(format: "%.2f", run.seconds)) s, "
            + "\(Int(run.maxResidentMegabytes)) MB\nstderr: \(run.stderr.prefix(1500))"
        #expect(!run.timedOut, "HANG (killed at 30 s): \(context)", sourceLocation: sourceLocation)
        #expect(!run.crashed, "CRASH (signal \(run.status)): \(context)", sourceLocation: sourceLocation)
        #expect(expected.contains(run.status), "expected exit \(expected.sorted()): \(context)", sourceLocation: sourceLocation)
        #expect(run.seconds < seconds, "slower than \(seconds) s: \(context)", sourceLocation: sourceLocation)
        #expect(run.maxResidentMegabytes < megabytes, "more than \(megabytes) MB: \(context)", sourceLocation: sourceLocation)
        for mention in mentions {
            #expect(run.stderr.contains(mention), "message does not mention '\(mention)': \(context)", sourceLocation: sourceLocation)
        }
        if let output, run.status != 0 {
            #expect(!FileManager.default.fileExists(atPath: output), "left \(output): \(context)", sourceLocation: sourceLocation)
        }
        return run
    }
}

/// Prints one line per measured hostile run (`hostile-table | case | tool | exit | s | MB`), so a run
/// against the release binaries (`make test-release-tools`) gives the table of every case.
enum HostileTable {
    static func record(_ label: String, tool: String, _ run: CommandLineTool.MeasuredRun) {
        let status = run.timedOut ? "killed" : run.crashed ? "signal \(run.status)" : "\(run.status)"
        print("hostile-table | \(label) | \(tool) | \(status) | \(String(format: "%.2f", run.seconds)) | \(Int(run.maxResidentMegabytes.rounded()))")
    }
}
