import Foundation
import SAMTestSupport
import SAMKernels
import Testing
@testable import SAMVerify

/// The built `samverify` executable (skipped when that build did not produce it).
let samverifyTool = CommandLineTool("samverify")

@Suite("Verify: the samverify command line")
struct CommandLineTests {
    @Test("exit 0 on a pass with the table, JSON and JUnit; 1 on a mutation naming its module; 2 on bad usage")
    func exitStatuses() throws {
        let folder = try temporaryFolder("cli")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)

        let pass = try samverifyTool.run([model, "--references", TestPaths.tinyReferences, "--json", folder + "/r.json",
                                            "--junit", folder + "/r.xml", "--quiet"])
        #expect(pass.status == 0, "\(pass.stdout)\(pass.stderr)")
        #expect(pass.stdout.contains("33 checks: 33 passed, 0 failed, 0 bad input, 0 not applicable; "
                                     + "task level 9 cases: 9 passed, 0 failed -> PASS (exit 0)"))
        #expect(pass.stderr.isEmpty)
        #expect(FileManager.default.fileExists(atPath: folder + "/r.json") && FileManager.default.fileExists(atPath: folder + "/r.xml"))

        let mutated = try ModelUnderTest.perturbed(model, tensor: "image_encoder.layers.1.blocks.0.mlp.fc1.weight", delta: 0.5,
                                                   to: folder + "/mutated.samw")
        let fail = try samverifyTool.run([mutated, "--references", TestPaths.tinyReferences, "--case", "image_encoder",
                                            "--junit", folder + "/fail.xml"])
        #expect(fail.status == 1)
        #expect(fail.stdout.contains("FIRST DIVERGENCE in image_encoder (image encoder on references/input_image.npy): "
                                     + "image_encoder.layers.1.blocks.0.mlp.fc1: max abs"))
        let xml = try String(contentsOfFile: folder + "/fail.xml", encoding: .utf8)
        #expect(xml.contains("first diverging module: image_encoder.layers.1.blocks.0.mlp.fc1"))

        let unknown = try samverifyTool.run([model, "--references", TestPaths.tinyReferences, "--case", "nope", "--json", folder + "/e.json"])
        #expect(unknown.status == 2 && unknown.stderr.contains("unknown case 'nope'"))
        #expect(try String(contentsOfFile: folder + "/e.json", encoding: .utf8).contains(#""status" : "bad_input""#))
        #expect(try samverifyTool.run([model]).status == 2)  // --references missing: a usage error is 2, not 64
        #expect(try samverifyTool.run([model, "--references", TestPaths.tinyReferences, "--atol", "-1"]).status == 2)
        #expect(try samverifyTool.run([folder + "/missing.samw", "--references", TestPaths.tinyReferences]).status == 2)
        #expect(try samverifyTool.run(["--help"]).status == 0)
    }

    @Test("--bf16 runs the bfloat16 linear layers and says so in the table and the JSON, or exits 2 where the CPU lacks them")
    func bfloat16() throws {
        let folder = try temporaryFolder("cli-bf16")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let run = try samverifyTool.run([model, "--references", TestPaths.tinyReferences, "--bf16", "--quiet",
                                         "--no-divergence", "--json", folder + "/r.json"])
        guard Kernels.bfloat16Available else {
            #expect(run.status == 2 && run.stderr.contains("AVX512_BF16"), "\(run.stderr)")
            return
        }
        // bfloat16's rounding is far outside float32's tolerances: the tensor checks fail (exit 1), and the
        // report says which path ran so that no one reads it as a float32 port that drifted.
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("linear layers: bfloat16 products (--bf16"))
        #expect(run.stdout.contains("task level 9 cases"))
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/r.json"))) as? [String: Any]
        #expect(report?["linearPrecision"] as? String == "bfloat16")
        let plain = try samverifyTool.run([model, "--references", TestPaths.tinyReferences, "--quiet", "--json", folder + "/f.json"])
        #expect(plain.status == 0 && !plain.stdout.contains("bfloat16"))
        let plainReport = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/f.json"))) as? [String: Any]
        #expect(plainReport?["linearPrecision"] == nil)
    }

    @Test("on a video set: --bf16 runs and says so; the image sets' options that do not apply are refused")
    func videoSetOptions() throws {
        let folder = try temporaryFolder("cli-video")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let set = TestPaths.sam2TinyVideoReferences
        let model = folder + "/video.samw"
        let convert = try CommandLineTool("samconvert").run([set + "/checkpoint.pt", "--config", set + "/config.json", "--out", model])
        #expect(convert.status == 0, "\(convert.stderr)")
        let refused = try samverifyTool.run([model, "--references", set, "--int8-products"])
        #expect(refused.status == 2 && refused.stderr.contains("--int8-products do(es) not apply to a video set"), "\(refused.stderr)")
        let run = try samverifyTool.run([model, "--references", set, "--bf16"])
        guard Kernels.bfloat16Available else {
            #expect(run.status == 2 && run.stderr.contains("AVX512_BF16"), "\(run.stderr)")
            return
        }
        // bfloat16's logits are outside float32's tolerance: exit 1, the path named, every frame in the table.
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("linear layers, memory attention and global attention: bfloat16 products (--bf16"))
        #expect((0..<8).allSatisfy { run.stdout.contains(String(format: "\n%05d ", $0)) }, "\(run.stdout)")
    }
}
