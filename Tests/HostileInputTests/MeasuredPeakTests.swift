import Foundation
import SAMTestSupport
import Testing

#if canImport(Glibc)
import Glibc

/// The hostile suites' memory limits rest on reading a spawned tool's own peak, never the peak of
/// the test process that spawned it (which the child's status can show for an instant at `execve`).
@Suite("Measured peak: a status reading counts only once it names the tool")
struct MeasuredPeakTests {
    /// This process's name as the kernel keeps it (15 bytes of the executable's name).
    static var ownName: String { CommandLineTool.processStatus(of: getpid())["Name"] ?? "" }

    @Test("This process read as itself gives its peak; read as a tool it is not, nothing")
    func readingNamesTheProcess() {
        let asItself = CommandLineTool.highWaterKilobytes(of: getpid(), running: "/any/folder/" + Self.ownName)
        let asATool = CommandLineTool.highWaterKilobytes(of: getpid(), running: "/any/folder/samrun")
        #expect(!Self.ownName.isEmpty && Self.ownName != "samrun")
        #expect(asItself > 1024, "own VmHWM \(asItself) kB")
        #expect(asATool == 0, "a reading under another name counted: \(asATool) kB")
    }

    @Test("A process gone is read as nothing")
    func goneProcess() throws {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { for pointer in argv { free(pointer) } }
        #expect(posix_spawn(&pid, "/bin/true", nil, nil, argv, environ) == 0)
        var status: Int32 = 0
        #expect(waitpid(pid, &status, 0) == pid)
        #expect(CommandLineTool.highWaterKilobytes(of: pid, running: "/bin/true") == 0)
    }
}
#endif
