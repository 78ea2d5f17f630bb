import Foundation
import SAMFiles
import SAMFormats
import SAMTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// samconvert killed (SIGKILL, no chance to clean up) at several moments of a conversion of the whole
/// tiny folder: the output path never holds a partial file; at most a `<out>.tmp-<pid>` temporary remains.
@Suite("Hostile: samconvert killed mid-run leaves no partial .samw", .serialized)
struct KillTests {
    @Test("SIGKILL after 2 ms ... 2.2 s (a whole run takes ~2 s in debug)", arguments: [2, 5, 10, 20, 50, 100, 200, 400, 1000, 1600, 1800, 1900, 2000, 2100, 2200])
    func killed(afterMilliseconds delay: Int) throws {
        let folder = try Hostile.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let out = folder + "/killed.samw"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try samconvert.path())
        process.arguments = [HostileCorpus.tiny, "--out", out]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        usleep(useconds_t(delay * 1000))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        if process.terminationReason == .uncaughtSignal {
            // A kill that lands after the rename (while the summary prints) leaves the whole file: the
            // invariant is that the final name never holds a partial one.
            if names.contains("killed.samw") {
                let file = try SAMWFile(path: out)
                try file.verifyChecksums()
                #expect(!file.entries.isEmpty, "killed after \(delay) ms: \(out) is not a whole model")
            }
            let others = names.filter { !$0.hasPrefix("killed.samw") }
            #expect(others.isEmpty, "killed after \(delay) ms left \(others)")
            let temporaries = names.filter { $0.hasPrefix("killed.samw.tmp-") }
            if !temporaries.isEmpty { print("note: SIGKILL after \(delay) ms left temporaries \(temporaries)") }
        } else {
            // Finished before the kill: whatever it says, the output is whole or absent.
            if names.contains("killed.samw") {
                let check: CommandLineTool.Run? = try samverify.run([out, "--references", HostileCorpus.tiny])
                #expect(process.terminationStatus == 0)
                if let check { #expect(!check.crashed) }
            }
        }
    }

    @Test("The unkilled conversion of the tiny folder succeeds (the kill test converts a real job)")
    func baseline() throws {
        let folder = try Hostile.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let start = Date()
        let run = try samconvert.run([HostileCorpus.tiny, "--out", folder + "/whole.samw"])
        print("note: tiny folder conversion took \(Date().timeIntervalSince(start)) s, exit \(run.status)")
        #expect(!run.crashed)
        #expect(run.status == 0 || !run.stderr.isEmpty)
    }
}
