import Foundation
@testable import SAMFiles
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `AtomicFileWriter` creates its temporary exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`): a link
/// or a file planted under the name it picks is never written through; it tries another name.
@Suite("Planted temporaries: a link at the writer's temporary name cannot redirect the write")
struct PlantedTemporaryTests {
    @Test("a symbolic link, a dangling link and a file at the first names: skipped, untouched; the output is written")
    func plantedNamesAreSkipped() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("planted-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let victim = folder + "/victim.txt", output = folder + "/model.samw"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
        let names = (0..<4).map { output + ".tmp-\(getpid())-\($0 + 10)" }
        #expect(symlink(victim, names[0]) == 0)
        #expect(symlink(folder + "/nothing-yet", names[1]) == 0)  // a dangling link: O_CREAT alone would create its target
        try Data("planted".utf8).write(to: URL(fileURLWithPath: names[2]))
        var offered = names.makeIterator()
        let writer = try AtomicFileWriter(path: output, policy: .replace, temporaryNames: { offered.next()! })
        try writer.write(Array("written".utf8))
        try writer.commit()
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "written")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me")
        #expect(!FileManager.default.fileExists(atPath: folder + "/nothing-yet"), "the dangling link's target was created")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: names[0]) == victim)
        #expect(try String(contentsOfFile: names[2], encoding: .utf8) == "planted")
    }

    @Test("when every name it tries is taken, the writer fails naming the output; nothing is written through")
    func everyNameTaken() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("planted-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let victim = folder + "/victim.txt", output = folder + "/model.samw"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
        let name = output + ".tmp-\(getpid())-1"
        #expect(symlink(victim, name) == 0)
        #expect(throws: FormatError.self) {
            _ = try AtomicFileWriter(path: output, policy: .replace, temporaryNames: { name })
        }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me")
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
