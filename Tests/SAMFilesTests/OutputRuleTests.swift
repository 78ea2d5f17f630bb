import Foundation
@testable import SAMFiles
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What may stand at an output's name, and that refused names are left exactly as they were.
@Suite("Outputs: the one rule for what a writer may replace")
struct OutputRuleTests {
    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("samoutput-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Type, inode and contents of what stands at `path` (a folder's listing, a link's target).
    static func snapshot(_ path: String) -> String {
        var status = stat()
        guard lstat(path, &status) == 0 else { return "absent" }
        var text = "mode \(status.st_mode & S_IFMT) inode \(status.st_ino)"
        switch status.st_mode & S_IFMT {
        case S_IFREG: text += " bytes " + ((try? Data(contentsOf: URL(fileURLWithPath: path)))?.base64EncodedString() ?? "?")
        case S_IFDIR: text += " holds " + ((try? FileManager.default.subpathsOfDirectory(atPath: path).sorted().joined(separator: ",")) ?? "?")
        case S_IFLNK: text += " -> " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?")
        default: break
        }
        return text
    }

    @Test("A directory, a link, a FIFO or a device at the name is refused and left as it was")
    func refusedKinds() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/dir/keep", withIntermediateDirectories: true)
        try Data("important".utf8).write(to: URL(fileURLWithPath: folder + "/dir/keep/important.txt"))
        try Data("target".utf8).write(to: URL(fileURLWithPath: folder + "/target"))
        try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: folder + "/target")
        #expect(mkfifo(folder + "/fifo", 0o600) == 0)
        for (name, kind) in [("dir", "a directory"), ("link", "a symbolic link"), ("fifo", "a FIFO")] {
            let path = folder + "/" + name
            let before = Self.snapshot(path)
            do {
                try AtomicFile.write([1, 2, 3], to: path)
                Issue.record("\(name): written")
            } catch {
                #expect(error.code == .outputRefused && error.message.contains(kind), "\(name): \(error)")
            }
            #expect(Self.snapshot(path) == before, "\(name) changed")
        }
        #expect(Self.snapshot(folder + "/target").hasSuffix(Data("target".utf8).base64EncodedString()))
        let device = Self.snapshot("/dev/null")
        #expect(throws: FormatError.self) { try AtomicFile.write([1], to: "/dev/null") }
        #expect(Self.snapshot("/dev/null") == device)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty)
    }

    @Test("A regular file is replaced; one of the run's inputs (also through a link or a hard link) is not")
    func inputs() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let input = folder + "/model.samw", other = folder + "/report.json"
        try Data("model".utf8).write(to: URL(fileURLWithPath: input))
        try Data("old".utf8).write(to: URL(fileURLWithPath: other))
        try FileManager.default.createSymbolicLink(atPath: folder + "/via-link", withDestinationPath: input)
        #expect(link(input, folder + "/hard") == 0)
        try AtomicFile.write(Array("new".utf8), to: other, policy: OutputPolicy(inputs: [input]))
        #expect(try String(contentsOfFile: other, encoding: .utf8) == "new")
        let before = Self.snapshot(input)
        for (output, inputs) in [(input, [input]), (input, [folder + "/via-link"]), (folder + "/hard", [input])] {
            #expect(throws: FormatError.self) { try AtomicFile.write([0], to: output, policy: OutputPolicy(inputs: inputs)) }
        }
        #expect(Self.snapshot(input) == before)
    }

    @Test("Kept unless --force: an existing file is refused, and one that appears during the write is kept")
    func keep() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/out.samw"
        try Data("first".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: FormatError.self) { try AtomicFile.write([1], to: path, policy: OutputPolicy(existing: .keep)) }
        try FileManager.default.removeItem(atPath: path)
        let writer = try AtomicFileWriter(path: path, policy: OutputPolicy(existing: .keep))
        try writer.write([1, 2, 3])
        try Data("appeared".utf8).write(to: URL(fileURLWithPath: path))  // another process, meanwhile
        #expect(throws: FormatError.self) { try writer.commit() }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "appeared")
        // The no-replace rename itself refuses a taken name (renameat2 or link+unlink).
        try Data("source".utf8).write(to: URL(fileURLWithPath: folder + "/source"))
        #expect(!OutputRule.renameNoReplace(folder + "/source", path) && errno == EEXIST)
        #expect(OutputRule.renameNoReplace(folder + "/source", folder + "/free"))
        #expect(try String(contentsOfFile: folder + "/free", encoding: .utf8) == "source")
    }

    @Test("Temporaries of dead processes are removed by the next writer of the output; a live one's are kept")
    func staleTemporaries() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/model.samw"
        // A pid that is not running: the largest possible, above pid_max.
        let dead = folder + "/model.samw.tmp-4194304-abc123"
        let live = folder + "/model.samw.tmp-\(getppid())-def456"
        let unrelated = folder + "/model.samw.tmp-notes"
        for file in [dead, live, unrelated] { try Data("partial".utf8).write(to: URL(fileURLWithPath: file)) }
        try AtomicFile.write([1], to: path)
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
        #expect(names == ["model.samw", "model.samw.tmp-\(getppid())-def456", "model.samw.tmp-notes"])
    }

    @Test("A staged folder appears whole; a failure while swapping puts the previous run back", arguments: [0, 1, 2, 3])
    func stagedFolder(failAfter: Int) throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folder = root + "/out"
        let owned = ["a.npy", "b.png", "c.json", "d.png"]
        // First run: a new folder, in one rename.
        let first = try StagedFolder(folder: folder, ownedNames: owned, policy: .replace)
        for name in ["a.npy", "b.png", "d.png"] { try AtomicFile.write(Array("run1 \(name)".utf8), to: first.path(name)) }
        try first.publish(["a.npy", "b.png", "d.png"])
        try Data("mine".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
        let before = Self.snapshot(folder) + ["a.npy", "b.png", "d.png", "notes.txt"].map { Self.snapshot(folder + "/" + $0) }.joined()

        // Second run fails part-way through the swap: the folder is as the first run left it.
        let second = try StagedFolder(folder: folder, ownedNames: owned, policy: .replace)
        for name in ["a.npy", "b.png", "c.json"] { try AtomicFile.write(Array("run2 \(name)".utf8), to: second.path(name)) }
        second.failAfterPlacing = failAfter
        if failAfter < 3 {
            #expect(throws: FormatError.self) { try second.publish(["a.npy", "b.png", "c.json"]) }
            let after = Self.snapshot(folder) + ["a.npy", "b.png", "d.png", "notes.txt"].map { Self.snapshot(folder + "/" + $0) }.joined()
            #expect(after == before, "after a failure at \(failAfter)")
        } else {
            // Completed: the second run's files only (d.png of the first run is gone), the user's file kept.
            try second.publish(["a.npy", "b.png", "c.json"])
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder)) == ["a.npy", "b.png", "c.json", "notes.txt"])
            #expect(try String(contentsOfFile: folder + "/a.npy", encoding: .utf8) == "run2 a.npy")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: root).filter { $0.contains(".tmp-") }.isEmpty)
    }

    @Test("A staged folder refuses a directory at an owned name before anything is written")
    func stagedFolderRefuses() throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/out/b.png/keep", withIntermediateDirectories: true)
        try Data("important".utf8).write(to: URL(fileURLWithPath: root + "/out/b.png/keep/important.txt"))
        let before = Self.snapshot(root + "/out")
        #expect(throws: FormatError.self) { try StagedFolder(folder: root + "/out", ownedNames: ["a.npy", "b.png"], policy: .replace) }
        #expect(Self.snapshot(root + "/out") == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root) == ["out"])
    }
}
