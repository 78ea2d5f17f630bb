import Foundation
import SAMTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Every CLI's outputs replace only a regular file that is none of the run's inputs; anything else at
/// an output's name is exit 2 and is kept exactly as it was (type, inode, contents).
@Suite("Hostile outputs: the CLIs keep what stands at an output's name", .serialized)
struct OutputRuleCLITests {
    /// Type, inode and contents (a folder's whole tree) of what stands at `path`.
    static func snapshot(_ path: String) -> String {
        var status = stat()
        guard lstat(path, &status) == 0 else { return "absent" }
        var text = "mode \(status.st_mode & S_IFMT) inode \(status.st_ino) rdev \(status.st_rdev)"
        switch status.st_mode & S_IFMT {
        case S_IFREG: text += " sha " + String((try? Data(contentsOf: URL(fileURLWithPath: path)))?.hashValue ?? 0)
            + " size \(status.st_size)"
        case S_IFDIR:
            let children = (try? FileManager.default.subpathsOfDirectory(atPath: path).sorted()) ?? []
            text += " holds " + children.map { $0 + "=" + snapshot(path + "/" + $0) }.joined(separator: ",")
        default: break
        }
        return text
    }

    static func expectRefused(_ run: CommandLineTool.Run, kept path: String, before: String, _ label: String) {
        #expect(run.status == 2 && !run.crashed, "\(label): status \(run.status) \(run.stderr)")
        #expect(run.stderr.contains("nothing was touched") || run.stderr.contains("output_refused"), "\(label): \(run.stderr)")
        #expect(snapshot(path) == before, "\(label): \(path) changed")
    }

    @Test("samrun --out: a non-empty directory, a link or a FIFO at an output name; the folder a file; an input inside")
    func samrunOut() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get()
        let out = folder + "/out"
        for name in ["overlay.png", "mask_1.png", "result.json", "image_embeddings.npy", "mask_0.png"] {
            try? FileManager.default.removeItem(atPath: out)
            try FileManager.default.createDirectory(atPath: out + "/" + name + "/keep", withIntermediateDirectories: true)
            try Data("important".utf8).write(to: URL(fileURLWithPath: out + "/" + name + "/keep/important.txt"))
            let before = Self.snapshot(out)
            let run = try samrun.run([model, Hostile.photo, "--point", "10,10", "--out", out])
            Self.expectRefused(run, kept: out, before: before, "directory at \(name)")
            #expect(run.stderr.contains(name) && run.stderr.contains("a directory"))
        }
        try FileManager.default.removeItem(atPath: out)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try Data("target".utf8).write(to: URL(fileURLWithPath: folder + "/target"))
        try FileManager.default.createSymbolicLink(atPath: out + "/result.json", withDestinationPath: folder + "/target")
        var before = Self.snapshot(out) + Self.snapshot(folder + "/target")
        var run = try samrun.run([model, Hostile.photo, "--point", "10,10", "--out", out])
        Self.expectRefused(run, kept: out, before: Self.snapshot(out), "link at result.json")
        #expect(Self.snapshot(out) + Self.snapshot(folder + "/target") == before)
        try FileManager.default.removeItem(atPath: out + "/result.json")
        #expect(mkfifo(out + "/overlay.png", 0o600) == 0)
        before = Self.snapshot(out)
        run = try samrun.run([model, Hostile.photo, "--point", "10,10", "--out", out])
        Self.expectRefused(run, kept: out, before: before, "FIFO at overlay.png")
        // --out naming a file (the model itself).
        before = Self.snapshot(model)
        run = try samrun.run([model, Hostile.photo, "--point", "10,10", "--out", model])
        Self.expectRefused(run, kept: model, before: before, "--out the model")
        // The image inside the folder under an output's name.
        try FileManager.default.removeItem(atPath: out)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Hostile.photo, toPath: out + "/overlay.png")
        before = Self.snapshot(out)
        run = try samrun.run([model, out + "/overlay.png", "--point", "10,10", "--out", out])
        Self.expectRefused(run, kept: out, before: before, "the image at overlay.png")
        #expect(run.stderr.contains("is the input"))
    }

    @Test("samrun: a second run replaces the first's files only, and --embeddings from the folder itself is refused")
    func samrunReplacesOwnFiles() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get()
        let out = folder + "/out"
        var run = try samrun.run([model, Hostile.photo, "--point", "10,10", "--masks", "all", "--out", out])
        #expect(run.status == 0, "\(run.stderr)")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: out + "/notes.txt"))
        run = try samrun.run([model, Hostile.photo, "--point", "10,10", "--masks", "single", "--out", out])
        #expect(run.status == 0, "\(run.stderr)")
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: out))
        // mask_0..2 of the first run are gone (no mix of two runs); the user's own file is kept.
        #expect(Set(names.filter { !$0.hasPrefix("mask_") }) == Set(["image_embeddings.npy", "image_embeddings.json", "low_res_masks.npy",
                                                                     "iou_predictions.npy", "overlay.png", "result.json", "notes.txt"]), "\(names)")
        #expect(names.filter { $0.hasPrefix("mask_") }.count == 1, "\(names)")
        let before = Self.snapshot(out)
        run = try samrun.run([model, Hostile.photo, "--point", "10,10", "--embeddings", out + "/image_embeddings.npy", "--out", out])
        Self.expectRefused(run, kept: out, before: before, "--embeddings inside --out")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".tmp-") }.isEmpty)
    }

    @Test("samverify --json/--junit: a device, a directory, the model, a reference file are refused and kept")
    func samverifyReports() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = folder + "/model.samw"
        try FileManager.default.copyItem(atPath: try Hostile.goodModel.get(), toPath: model)
        let references = folder + "/tinyref"
        try FileManager.default.createDirectory(atPath: references, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: HostileCorpus.tiny + "/references", toPath: references + "/references")
        try FileManager.default.copyItem(atPath: HostileCorpus.tiny + "/manifest.json", toPath: references + "/manifest.json")
        try FileManager.default.createDirectory(atPath: folder + "/dir/keep", withIntermediateDirectories: true)
        let reference = references + "/references/point1/onnx_point_coords.npy"
        try FileManager.default.createSymbolicLink(atPath: folder + "/via-link.npy", withDestinationPath: reference)
        let targets = ["/dev/full", "/dev/null", folder + "/dir", model, reference, references + "/manifest.json", folder + "/via-link.npy"]
        for option in ["--json", "--junit"] {
            for target in targets {
                let before = Self.snapshot(target) + Self.snapshot(model) + Self.snapshot(reference)
                let run = try samverify.run([model, "--references", references, "--quiet", "--case", "point1", option, target])
                #expect(run.status == 2 && !run.crashed, "\(option) \(target): \(run.status) \(run.stderr)")
                #expect(Self.snapshot(target) + Self.snapshot(model) + Self.snapshot(reference) == before, "\(option) \(target) changed")
            }
        }
        let same = try samverify.run([model, "--references", references, "--quiet", "--json", folder + "/r", "--junit", folder + "/r"])
        #expect(same.status == 2 && !FileManager.default.fileExists(atPath: folder + "/r"))
        let good = try samverify.run([model, "--references", references, "--quiet", "--case", "point1", "--json", folder + "/r.json"])
        #expect(good.status == 0 && FileManager.default.fileExists(atPath: folder + "/r.json"), "\(good.stderr)")
    }

    @Test("samconvert --out: its own input (also through a link), a directory, a device; without --force any file")
    func samconvertOut() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let input = folder + "/mobile_sam.h5", config = HostileCorpus.tiny + "/config.json"
        try FileManager.default.copyItem(atPath: HostileCorpus.tiny + "/mobile_sam.h5", toPath: input)
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.h5", withDestinationPath: input)
        try FileManager.default.createDirectory(atPath: folder + "/dir.samw/keep", withIntermediateDirectories: true)
        try Data("old".utf8).write(to: URL(fileURLWithPath: folder + "/old.samw"))
        let cases: [([String], String)] = [
            ([input, "--config", config, "--out", input, "--force"], input),
            ([folder + "/link.h5", "--config", config, "--out", input, "--force"], input),
            ([input, "--config", config, "--out", folder + "/link.h5", "--force"], folder + "/link.h5"),
            ([input, "--config", config, "--out", folder + "/dir.samw", "--force"], folder + "/dir.samw"),
            ([input, "--config", config, "--out", "/dev/null", "--force"], "/dev/null"),
            ([input, "--config", config, "--out", folder + "/old.samw"], folder + "/old.samw"),
            ([input, "--config", config, "--out", config, "--force"], config),
        ]
        for (arguments, kept) in cases {
            let before = Self.snapshot(kept) + Self.snapshot(input)
            let run = try samconvert.run(arguments)
            #expect(run.status == 2 && !run.crashed, "\(arguments): \(run.status) \(run.stderr)")
            #expect(Self.snapshot(kept) + Self.snapshot(input) == before, "\(arguments): \(kept) changed")
        }
        let forced = try samconvert.run([input, "--config", config, "--out", folder + "/old.samw", "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".tmp-") }.isEmpty)
    }

    @Test("A temporary left by a killed samconvert is removed by the next conversion to the same output")
    func staleTemporary() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let out = folder + "/model.samw"
        let stale = out + ".tmp-4194304-1f2e3d"  // no process has this pid (above pid_max's default)
        try Data(count: 4096).write(to: URL(fileURLWithPath: stale))
        let run = try samconvert.run([HostileCorpus.tiny + "/mobile_sam.h5", "--config", HostileCorpus.tiny + "/config.json", "--out", out])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["model.samw"])
    }
}
