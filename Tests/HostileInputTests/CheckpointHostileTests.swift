import Foundation
import SAMTestSupport
import Testing

/// The PyTorch and safetensors readers through the command-line tools: hostile pickles are refused
/// naming their global without anything running, damaged files give a message and exit status 2.
@Suite("Hostile inputs: .pth and .safetensors through saminspect and samconvert", .serialized)
struct CheckpointHostileTests {
    static let fixtures = HostileCorpus.root + "/Tests/SAMFormatsTests/Fixtures"
    static let tinyCheckpoints = HostileCorpus.root + "/Tests/SAMImportTests/Fixtures"

    /// The hostile pickles of make_checkpoint_fixtures.py: file, the global it names, and the file its
    /// command would create if anything ran it.
    static let refused: [(file: String, global: String, marker: String)] = [
        ("pth_refuse_os_system.pth", "os.system", "/tmp/samport-marker-os-system"),
        ("pth_refuse_posix_system.pth", "posix.system", "/tmp/samport-marker-posix-system"),
        ("pth_refuse_builtins_exec.pth", "builtins.exec", "/tmp/samport-marker-builtins-exec"),
        ("pth_refuse_builtins_eval.pth", "builtins.eval", "/tmp/samport-marker-builtins-eval"),
        ("pth_refuse_subprocess.pth", "subprocess.check_output", "/tmp/samport-marker-subprocess"),
        ("pth_refuse_inst.pth", "os.system", "/tmp/samport-marker-inst"),
    ]

    @Test("a pickle naming os.system, posix.system, exec, eval or subprocess: exit 2 naming it, nothing runs, nothing written")
    func refusedGlobals() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        for (file, global, marker) in Self.refused {
            try? FileManager.default.removeItem(atPath: marker)
            let input = Self.fixtures + "/" + file
            let inspect = try saminspect.run([input])
            #expect(!inspect.crashed && inspect.status == 2, "saminspect \(file): \(inspect.status)")
            #expect(inspect.stdout.contains("\(global) (REFUSED)"), "saminspect \(file) lists: \(inspect.stdout)")
            #expect(inspect.stderr.contains(input) && inspect.stderr.contains("'\(global)'") && inspect.stderr.contains("[refusedGlobal]"),
                    "saminspect \(file): \(inspect.stderr)")
            let output = folder + "/out.samw"
            let convert = try samconvert.run([input, "--out", output])
            #expect(!convert.crashed && convert.status == 2, "samconvert \(file): \(convert.status)")
            #expect(convert.stderr.contains(input) && convert.stderr.contains("'\(global)'"), "samconvert \(file): \(convert.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output))
            #expect(!FileManager.default.fileExists(atPath: marker), "\(marker) exists after \(file): something ran")
        }
    }

    @Test("every damaged or hostile checkpoint fixture: saminspect and samconvert exit 2 with a message naming the file")
    func brokenFixtures() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.fixtures).filter { name in
            (name.hasPrefix("pth_") || name.hasPrefix("st_"))
                && !["pth_state_dict", "pth_wrapped", "pth_deep_value", "st_tensors"].contains { name.hasPrefix($0) }
        }
        #expect(names.count == 41)
        for name in names.sorted() {
            let input = Self.fixtures + "/" + name
            for (tool, arguments) in [(saminspect, [input]), (samconvert, [input, "--out", folder + "/out.samw"])] {
                let run = try tool.run(arguments)
                #expect(!run.crashed && run.status == 2, "\(tool.name) \(name): status \(run.status)")
                #expect(run.stderr.contains(input), "\(tool.name) \(name): \(run.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: folder + "/out.samw"))
        }
    }

    @Test("truncated and bit-flipped tiny checkpoints (.pth, .safetensors): saminspect and samconvert",
          arguments: ["tiny_mobile_sam.pth", "tiny_mobile_sam.safetensors"])
    func mutations(name: String) throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let good = try Hostile.read(Self.tinyCheckpoints + "/" + name)
        let ext = (name as NSString).pathExtension
        // A .pth starts with a zip local-header signature, which every open checks; a safetensors file
        // starts with its header length, where a flip of a low bit can leave a parseable file.
        for var variant in HostileCorpus.mutations(of: good, seed: ext == "pth" ? 0x7054 : 0x5AFE, magicLength: ext == "pth" ? 4 : 8) {
            if ext == "safetensors" && variant.name.hasPrefix("bitflip") { variant.strict = false }
            let input = try Hostile.write(variant, in: folder, ext: ext)
            try Hostile.check(saminspect, ["{}"], input: input, variant: variant, output: nil, folder: folder)
            try Hostile.check(samconvert, ["{}", "--config", HostileCorpus.tiny + "/config.json", "--out", folder + "/out.samw"],
                              input: input, variant: variant, output: folder + "/out.samw", folder: folder)
        }
    }
}
