import Foundation
import SAMConvert
import SAMFormats
import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

let samtrackTool = CommandLineTool("samtrack")

/// samtrack as users call it, on the tiny video set: every output on success; on bad input a message
/// naming the frame, object or limit, exit 2, and nothing written.
@Suite("Pipeline: the samtrack command line")
struct SamTrackCommandLineTests {
    static let set = TestPaths.sam2TinyVideoReferences

    static func model(in folder: String) throws -> String {
        var request = ConversionRequest(inputs: [set + "/checkpoint.pt"], output: folder + "/video.samw")
        request.configFile = set + "/config.json"
        _ = try Converter.run(request)
        return request.output
    }

    /// A scratch folder named after `name` holding the converted model and a copy of the clip
    /// (`clip(in:)`); the caller removes `folder`. Removed here when making it fails.
    static func workspace(_ name: String) throws -> (folder: String, model: String, frames: String, prompts: String) {
        let folder = try TestPaths.temporaryFolder(name)
        do {
            let model = try model(in: folder)
            let (frames, prompts) = try clip(in: folder)
            return (folder, model, frames, prompts)
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
    }

    /// The set's frames and masks copied into `folder` (so a test can change them), and its prompts.
    static func clip(in folder: String) throws -> (frames: String, prompts: String) {
        let manager = FileManager.default
        try manager.copyItem(atPath: set + "/frames", toPath: folder + "/frames")
        try manager.copyItem(atPath: set + "/masks", toPath: folder + "/masks")
        try manager.copyItem(atPath: set + "/prompts.json", toPath: folder + "/prompts.json")
        return (folder + "/frames", folder + "/prompts.json")
    }

    @Test("a run writes masks, logits, overlays and result.json for every frame; logits are upstream's")
    func outputs() throws {
        let (folder, model, frames, prompts) = try Self.workspace("samtrack")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try samtrackTool.run([model, frames, "--prompts", prompts, "--out", folder + "/out"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("frame 00007 (8 of 8)"))
        let manager = FileManager.default
        #expect(Set(try manager.contentsOfDirectory(atPath: folder + "/out")) == ["masks", "logits", "overlay", "result.json"])
        #expect(Set(try manager.contentsOfDirectory(atPath: folder + "/out/masks/00003")) == ["object_1.png", "object_2.png", "object_3.png"])
        for stem in (0..<8).map({ String(format: "%05d", $0) }) {
            let native = try NPY.read(folder + "/out/logits/\(stem).npy"), reference = try NPY.read(Self.set + "/reference/logits/\(stem).npy")
            #expect(native.shape == [3, 1, 48, 64] && native.shape == reference.shape)
            let worst = zip(native.floats(), reference.floats()).map { abs($0 - $1) }.max() ?? .infinity
            #expect(worst < 1e-4, "\(stem): \(worst)")
            #expect(manager.fileExists(atPath: folder + "/out/overlay/\(stem).png"))
        }
        let result = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/out/result.json"))) as? [String: Any]
        let perFrame = result?["frames"] as? [[String: Any]]
        #expect(perFrame?.count == 8 && (perFrame?.first?["objects"] as? [Int]) == [1, 2, 3])
        #expect((result?["prompts"] as? [Any])?.count == 4 && (result?["model"] as? String)?.isEmpty == false)
        // --no-logits leaves logits/ out.
        let lean = try samtrackTool.run([model, frames, "--prompts", prompts, "--out", folder + "/lean", "--no-logits", "--max-frames", "2"])
        #expect(lean.status == 0, "\(lean.stderr)")
        #expect(Set(try manager.contentsOfDirectory(atPath: folder + "/lean")) == ["masks", "overlay", "result.json"])
    }

    #if os(Linux)
    /// jemalloc prints its options and what it holds when MALLOC_CONF asks (stats_print): freed pages
    /// stay with the process (no decay, no separate arena for large requests), which keeps the resident
    /// peak flat over a long clip, and a tracking run's memory is jemalloc's (it holds more after
    /// tracking than after `--help`). The tracking run prints all of its statistics (60–80 KB).
    @Test("on Linux samtrack allocates through jemalloc, keeping freed pages for the next frame")
    func allocator() throws {
        let (folder, model, frames, prompts) = try Self.workspace("samtrack-allocator")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var environment = ProcessInfo.processInfo.environment
        environment["MALLOC_CONF"] = "stats_print:true,stats_print_opts:mdablxeh"
        let help = try samtrackTool.run(["--help"], environment: environment)
        environment["MALLOC_CONF"] = "stats_print:true"
        let run = try samtrackTool.run([model, frames, "--prompts", prompts, "--out", folder + "/out", "--no-logits", "--max-frames", "2"],
                                       environment: environment)
        #expect(run.status == 0, "\(run.stderr.prefix(2000))")
        #expect(run.stderr.contains("bins:"), "jemalloc's statistics have no bins section")
        for option in ["opt.dirty_decay_ms: -1", "opt.muzzy_decay_ms: -1", "opt.oversize_threshold: 0"] {
            #expect(run.stderr.contains(option), "jemalloc's statistics do not show \(option)")
        }
        // "Allocated: N, active: N, metadata: N (n_thp N), resident: N, ..."
        func resident(_ stderr: String) -> Int? {
            stderr.split(separator: "\n").first { $0.hasPrefix("Allocated:") }?
                .split(separator: ",").first { $0.contains("resident:") }?.split(separator: " ").last.flatMap { Int($0) }
        }
        let idle = resident(help.stderr), tracked = resident(run.stderr)
        #expect(idle != nil && tracked != nil && tracked! > idle! + (4 << 20),
                "jemalloc holds \(tracked.map(String.init) ?? "?") bytes after tracking, \(idle.map(String.init) ?? "?") after --help")
    }
    #endif

    @Test("--corrections-as-conditioning --non-overlapping-masks on a model converted without them: upstream's switched run")
    func predictorSwitches() throws {
        let folder = try TestPaths.temporaryFolder("samtrack-switches")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let switched = TestPaths.sam2TinyVideoSwitchesReferences
        // The switched set's weights with a config.json whose switches are off.
        let url = URL(fileURLWithPath: switched + "/config.json")
        var config = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var video = try #require(config["video"] as? [String: Any])
        video["non_overlap_masks"] = false
        video["add_all_frames_to_correct_as_cond"] = false
        config["video"] = video
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: folder + "/config.json"))
        var request = ConversionRequest(inputs: [switched + "/checkpoint.pt"], output: folder + "/video.samw")
        request.configFile = folder + "/config.json"
        _ = try Converter.run(request)
        try FileManager.default.copyItem(atPath: switched + "/masks", toPath: folder + "/masks")
        try FileManager.default.copyItem(atPath: switched + "/prompts.json", toPath: folder + "/prompts.json")
        func worstError(_ flags: [String], out: String) throws -> Float {
            let run = try samtrackTool.run([request.output, switched + "/frames", "--prompts", folder + "/prompts.json", "--out", folder + "/\(out)"] + flags)
            #expect(run.status == 0, "\(run.stderr)")
            var worst: Float = 0
            for stem in (0..<8).map({ String(format: "%05d", $0) }) {
                let native = try NPY.read(folder + "/\(out)/logits/\(stem).npy"), reference = try NPY.read(switched + "/reference/logits/\(stem).npy")
                worst = max(worst, zip(native.floats(), reference.floats()).map { abs($0 - $1) }.max() ?? .infinity)
            }
            return worst
        }
        #expect(try worstError(["--corrections-as-conditioning", "--non-overlapping-masks"], out: "on") < 1e-4)
        #expect(try worstError([], out: "off") > 1)  // the model's own settings, off: not upstream's switched run
        let result = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/on/result.json"))) as? [String: Any]
        let options = result?["options"] as? [String: Any]
        #expect(options?["non_overlapping_masks"] as? Bool == true && options?["corrections_as_conditioning"] as? Bool == true, "\(String(describing: options))")
    }

    @Test("--bf16 runs the linear layers in bfloat16 and result.json says so; refused where the CPU lacks it")
    func bfloat16() throws {
        let (folder, model, frames, prompts) = try Self.workspace("samtrack-bf16")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let lowered = try samtrackTool.run([model, frames, "--prompts", prompts, "--out", folder + "/bf16", "--bf16", "--max-frames", "2"])
        guard Kernels.bfloat16Available else {
            #expect(lowered.status == 2 && lowered.stderr.contains("--bf16"), "\(lowered.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder + "/bf16"))
            return
        }
        #expect(lowered.status == 0, "\(lowered.stderr)")
        let full = try samtrackTool.run([model, frames, "--prompts", prompts, "--out", folder + "/f32", "--max-frames", "2"])
        #expect(full.status == 0, "\(full.stderr)")
        func precision(_ out: String) throws -> String? {
            let result = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/\(out)/result.json"))) as? [String: Any]
            return (result?["options"] as? [String: Any])?["linear_precision"] as? String
        }
        #expect(try precision("bf16") == "bfloat16" && precision("f32") == "float32")
        let a = try NPY.read(folder + "/bf16/logits/00001.npy").floats(), b = try NPY.read(folder + "/f32/logits/00001.npy").floats()
        #expect(a.count == b.count && zip(a, b).contains { $0 != $1 }, "--bf16 changed no logit")
    }

    /// Runs samtrack with `prompts` written as the prompts file (or the given frames, or FRAMES made
    /// in the test's folder by `frames`); it must exit 2 with `message` in its error and write nothing.
    static func refuses(_ promptsJSON: String?, message: String, changeFrames: ((String) throws -> Void)? = nil,
                        frames makeFrames: ((String) throws -> String)? = nil) throws {
        let (folder, model, frames, prompts) = try workspace("samtrack-bad")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        if let promptsJSON { try promptsJSON.write(toFile: prompts, atomically: true, encoding: .utf8) }
        try changeFrames?(frames)
        let input = try makeFrames?(folder) ?? frames
        let started = Date()
        let run = try samtrackTool.run([model, input, "--prompts", prompts, "--out", folder + "/out"])
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/out"))
        // Nor a staging folder with the frames tracked before the failure.
        let left = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".tmp-") }
        #expect(left.isEmpty, "left \(left)")
        #expect(Date().timeIntervalSince(started) < 30)
    }

    @Test("bad prompts: a frame past the end, NaN, an entry with no prompt, too many objects")
    func badPrompts() throws {
        try Self.refuses(#"[{"frame": 8, "object": 1, "points": [[10, 10, 1]]}]"#, message: "frame 8")
        try Self.refuses(#"[{"frame": 0, "object": 1, "points": [[NaN, 10, 1]]}]"#, message: "NaN")
        try Self.refuses(#"[{"frame": 0, "object": 1}]"#, message: "entry 0")
        let many = (0..<10_000).map { #"{"frame": 0, "object": \#($0), "points": [[10, 10, 1]]}"# }.joined(separator: ",")
        try Self.refuses("[" + many + "]", message: "64")
    }

    @Test("bad frames: two sizes in one folder, a file that is not a frame, a frame cut off after the first five")
    func badFrames() throws {
        try Self.refuses(nil, message: "00003") { frames in
            // A frame of another size (the first frame is 64x48).
            try FileManager.default.removeItem(atPath: frames + "/00003.jpg")
            try FileManager.default.copyItem(atPath: TestPaths.packageRoot + "/reference_outputs/demo/photo.png", toPath: frames + "/00003.png")
        }
        try Self.refuses(nil, message: "notes.txt") { frames in
            try "not a frame".write(toFile: frames + "/notes.txt", atomically: true, encoding: .utf8)
        }
        // Its header is whole (the sizes check passes), its data ends early: found while tracking,
        // once frames 0-4 are staged in their folders.
        try Self.refuses(nil, message: "00005.jpg") { frames in
            let whole = try Data(contentsOf: URL(fileURLWithPath: frames + "/00005.jpg"))
            try whole.prefix(300).write(to: URL(fileURLWithPath: frames + "/00005.jpg"))
        }
    }

    @Test("a frames path named with escape sequences is refused with the name escaped, never raw")
    func escapedNames() throws {
        let folder = try TestPaths.temporaryFolder("samtrack-escapes")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try Self.model(in: folder)
        let prompts = folder + "/prompts.json"
        try FileManager.default.copyItem(atPath: Self.set + "/prompts.json", toPath: prompts)
        let evil = "evil\u{1B}]0;pwned\u{07}\u{1B}[2J\u{202E}"
        // A video file of noise, and an empty folder, each under the hostile name.
        try Data(repeating: 0x5A, count: 500).write(to: URL(fileURLWithPath: folder + "/" + evil + ".mp4"))
        try FileManager.default.createDirectory(atPath: folder + "/" + evil + "dir", withIntermediateDirectories: false)
        for frames in [folder + "/" + evil + ".mp4", folder + "/" + evil + "dir"] {
            let run = try samtrackTool.run([model, frames, "--prompts", prompts, "--out", folder + "/out"])
            #expect(run.status == 2, "\(run.stderr)")
            let raw = run.stderr.unicodeScalars.filter { ($0.value < 0x20 && $0 != "\n") || $0 == "\u{202E}" }
            #expect(raw.isEmpty, "raw control characters: \(raw.map { String($0.value, radix: 16) })")
            #expect(run.stderr.contains("evil\\x1b]0;pwned\\x07\\x1b[2J\\u{202e}"), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder + "/out"))
        }
    }
}
