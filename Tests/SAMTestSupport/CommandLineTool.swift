import Foundation

/// An executable of this package (samverify, samrun ...), run with arguments: from the folder
/// SAM_TOOLS_DIR names when it is set (CI points it at the release binaries users get), else from
/// beside the test bundle (SwiftPM puts every product of a build in one folder). A tool that is
/// not there fails the test that runs it: the command-line suites never skip.
public struct CommandLineTool: Sendable {
    public let name: String
    /// nil when the tool is not where it was looked for.
    public let binary: String?
    private let searched: [String]

    public init(_ name: String) {
        self.name = name
        var folders: [URL] = []
        if let tools = ProcessInfo.processInfo.environment["SAM_TOOLS_DIR"], !tools.isEmpty {
            folders = [URL(fileURLWithPath: tools)]
        } else {
            folders = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
            for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
                folders.append(bundle.bundleURL.deletingLastPathComponent())
            }
            folders.append(Bundle.main.bundleURL)
        }
        searched = folders.map(\.path)
        binary = folders.map { $0.appendingPathComponent(name).path }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    public struct Run: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        /// True when the process ended by a signal (a crash), not by exiting.
        public var crashed: Bool
    }

    public struct NotBuilt: Error, CustomStringConvertible {
        public let name: String
        public let searched: [String]
        public var description: String {
            "\(name) is not in \(searched.joined(separator: " or ")) (build the package's products, or set SAM_TOOLS_DIR)"
        }
    }

    /// A program at a known path (a system program, for the harness's own tests).
    public init(path: String) {
        name = URL(fileURLWithPath: path).lastPathComponent
        searched = [URL(fileURLWithPath: path).deletingLastPathComponent().path]
        binary = FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// The executable's path, or an error naming where it was looked for.
    public func path() throws -> String {
        guard let binary else { throw NotBuilt(name: name, searched: searched) }
        return binary
    }

    /// Runs the tool with `arguments`, in this process's environment or in `environment`.
    public func run(_ arguments: [String], environment: [String: String]? = nil) throws -> Run {
        let binary = try path()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Both pipes drained at once and before waiting: a child blocked writing to a full stderr pipe
        // (64 KB) while this thread waits for the end of its stdout would never end.
        let stderrReader = PipeReader(err.fileHandleForReading)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = stderrReader.data()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                   stderr: String(decoding: stderr, as: UTF8.self), crashed: process.terminationReason == .uncaughtSignal)
    }
}

/// Reads a pipe to its end on a thread of its own; `data()` waits for the end.
private final class PipeReader: @unchecked Sendable {
    private var contents = Data()
    private let finished = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            contents = handle.readDataToEndOfFile()
            finished.signal()
        }
    }

    func data() -> Data {
        finished.wait()
        return contents
    }
}

#if canImport(Glibc)
import Glibc

extension CommandLineTool {
    /// A run measured by the kernel: wall time, the child's own peak resident memory, and whether it
    /// had to be killed at `timeout` seconds (a tool blocked on a FIFO).
    ///
    /// The peak is the largest `VmHWM` read from /proc/PID/status while the child runs (every 2 ms),
    /// not wait4's `ru_maxrss`: Linux folds the memory the process had before `execve` into that
    /// figure, and a spawned child's pre-exec memory is this test process's (posix_spawn shares it),
    /// so `ru_maxrss` reports the test runner's size. wait4's figure is the fallback when the child
    /// ends before a first reading.
    ///
    /// A reading counts only when the status names the tool: `execve` wakes the spawning thread
    /// before it swaps the child's memory map, so a reading at once after the spawn can still show
    /// this test process's map, and the kernel renames the child only after the swap.
    public struct MeasuredRun: Sendable {
        public var status: Int32
        public var stderr: String
        public var seconds: Double
        public var maxResidentMegabytes: Double
        public var timedOut: Bool
        public var crashed: Bool
    }

    public struct SpawnFailed: Error, CustomStringConvertible {
        public let description: String
    }

    /// A refused run (non-zero exit) that ends before the first `VmHWM` reading — a busy machine can
    /// keep this thread off the CPU for the whole of a 30 ms run — is run again, up to ten times,
    /// until a reading lands: wait4's figure would report this test process's size. Refused runs
    /// write nothing, so a rerun sees what the first saw; a successful run is never repeated.
    public func measured(_ arguments: [String], timeout: Double = 30) throws -> MeasuredRun {
        var attempt = 1
        while true {
            let (run, peakWasRead) = try measuredOnce(arguments, timeout: timeout)
            if peakWasRead || run.status == 0 || attempt == 10 { return run }
            attempt += 1
        }
    }

    private func measuredOnce(_ arguments: [String], timeout: Double) throws -> (MeasuredRun, peakWasRead: Bool) {
        let binary = try path()
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("samtool-\(UUID().uuidString).err").path
        defer { unlink(errorFile) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errorFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv: [UnsafeMutablePointer<CChar>?] = ([binary] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let started = Date()
        let spawned = posix_spawn(&pid, binary, &actions, nil, argv, environ)
        guard spawned == 0 else { throw SpawnFailed(description: "cannot start \(binary): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        var usage = rusage()
        var timedOut = false
        var peakKilobytes = 0
        while true {
            peakKilobytes = max(peakKilobytes, Self.highWaterKilobytes(of: pid, running: binary))
            let waited = wait4(pid, &status, WNOHANG, &usage)
            if waited == pid { break }
            if waited < 0 && errno != EINTR { throw SpawnFailed(description: "wait4: \(String(cString: strerror(errno)))") }
            if Date().timeIntervalSince(started) > timeout && !timedOut {
                timedOut = true
                kill(pid, SIGKILL)
            }
            usleep(2000)
        }
        let seconds = Date().timeIntervalSince(started)
        let signalled = status & 0x7F != 0
        let stderr = (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? ""
        let kilobytes = peakKilobytes > 0 ? peakKilobytes : usage.ru_maxrss
        let run = MeasuredRun(status: signalled ? status & 0x7F : (status >> 8) & 0xFF, stderr: stderr, seconds: seconds,
                              maxResidentMegabytes: Double(kilobytes) / 1024, timedOut: timedOut,
                              crashed: signalled && !timedOut)
        return (run, peakKilobytes > 0)
    }

    /// `VmHWM` in kB of a process once it runs `binary` (0 when it is gone, not yet readable, or
    /// still named as the process that spawned it). The kernel keeps 15 bytes of a name.
    public static func highWaterKilobytes(of pid: pid_t, running binary: String) -> Int {
        // One read: a name read after the swap vouches for the map read with it.
        let status = processStatus(of: pid)
        let toolName = String(URL(fileURLWithPath: binary).lastPathComponent.utf8.prefix(15)) ?? ""
        guard status["Name"] == toolName, let peak = status["VmHWM"] else { return 0 }
        return Int(peak.split(separator: " ").first ?? "") ?? 0
    }

    /// /proc/PID/status as fields ("VmHWM" -> "1234 kB"), values trimmed; empty when it cannot be read.
    public static func processStatus(of pid: pid_t) -> [String: String] {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return [:] }
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }
}
#endif
