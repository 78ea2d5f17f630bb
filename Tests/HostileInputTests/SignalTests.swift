import Foundation
import SAMFormats
import SAMImage
import SAMImageFiles
import SAMTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Signals that end a tool part-way: SIGINT or SIGTERM while it writes leaves no temporary and no
/// half-written output, and the tool dies of that signal as a shell expects; a model truncated in
/// place while samrun has it mapped ends samrun with exit 2 and a message naming the model.
@Suite("Hostile: interrupted writes leave nothing behind; a model truncated while mapped is exit 2", .serialized)
struct SignalTests {
    /// Sends `signal` to `tool`; it dies of that signal, and no temporary is left in `folder`.
    static func interrupt(_ tool: BackgroundTool, with signal: Int32, expectingNothingLeftIn folder: String,
                          sourceLocation: SourceLocation = #_sourceLocation) {
        tool.send(signal)
        let ending = tool.waitForEnd()
        #expect(ending == .signalled(signal), "\(tool.report())", sourceLocation: sourceLocation)
        #expect(InterruptibleInputs.temporaries(in: folder).isEmpty, "left \(InterruptibleInputs.temporaries(in: folder))",
                sourceLocation: sourceLocation)
    }

    @Test("samconvert: SIGINT or SIGTERM while the model is written removes its temporary", arguments: [SIGINT, SIGTERM])
    func conversionInterrupted(by signal: Int32) throws {
        let model = try InterruptibleInputs.wideModel.get()
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let out = folder + "/wide.samw"
        let tool = try BackgroundTool(samconvert, [model.weights, "--config", model.config, "--out", out])
        let writing = tool.waitUntil(seconds: 300) { InterruptibleInputs.temporaries(in: folder).count > 0 }
        try #require(writing, "no temporary appeared beside --out: \(tool.report())")
        Self.interrupt(tool, with: signal, expectingNothingLeftIn: folder)
        #expect(!FileManager.default.fileExists(atPath: out), "a model appeared at --out")
    }

    enum FolderBefore: CustomStringConvertible, CaseIterable {
        case absent, earlierRun
        var description: String { self == .absent ? "no --out folder" : "an earlier run's --out folder" }
    }

    @Test("samrun: SIGINT or SIGTERM while the outputs are staged removes the staging folder; --out stays as it was",
          arguments: [SIGINT, SIGTERM], FolderBefore.allCases)
    func runInterrupted(by signal: Int32, folderBefore: FolderBefore) throws {
        let model = try Hostile.goodModel.get()
        let photo = try InterruptibleInputs.largePhoto.get()
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let out = folder + "/out"
        var before: [String: Data] = [:]
        if folderBefore == .earlierRun {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
            before = ["result.json": Data("{\"earlier\": true}\n".utf8), "mask_1.png": Data("earlier mask".utf8), "notes.txt": Data("mine".utf8)]
            for (name, bytes) in before { try bytes.write(to: URL(fileURLWithPath: out + "/" + name)) }
        }
        let tool = try BackgroundTool(samrun, [model, photo, "--point", "3000,2000", "--out", out])
        // Signalled once a first output is staged (a whole file in the staging folder): the others follow.
        let staging = tool.waitUntil(seconds: 300) {
            InterruptibleInputs.temporaries(in: folder).contains { staged in
                ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + staged)) ?? []).contains { !$0.contains(".tmp-") }
            }
        }
        try #require(staging, "no staged output appeared: \(tool.report())")
        Self.interrupt(tool, with: signal, expectingNothingLeftIn: folder)
        if folderBefore == .absent {
            #expect(!FileManager.default.fileExists(atPath: out), "an --out folder appeared")
        } else {
            let names = Set(try FileManager.default.contentsOfDirectory(atPath: out))
            #expect(names == Set(before.keys), "--out now holds \(names.sorted())")
            for (name, bytes) in before {
                #expect(FileManager.default.contents(atPath: out + "/" + name) == bytes, "\(name) changed")
            }
        }
    }

    @Test("samtrack: SIGINT or SIGTERM once frames are staged in their folders removes the staging folder", arguments: [SIGINT, SIGTERM])
    func trackingInterrupted(by signal: Int32) throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let set = TestPaths.sam2TinyVideoReferences
        let model = folder + "/video.samw"
        let converted = try samconvert.run([set + "/checkpoint.pt", "--config", set + "/config.json", "--out", model])
        try #require(converted.status == 0, "\(converted.stderr)")
        // The set's eight frames over and over: a clip long enough to be signalled part-way.
        let frames = folder + "/frames"
        try FileManager.default.createDirectory(atPath: frames, withIntermediateDirectories: false)
        for index in 0..<3000 {
            try FileManager.default.linkItem(atPath: set + String(format: "/frames/%05d.jpg", index % 8),
                                             toPath: frames + String(format: "/%05d.jpg", index))
        }
        let out = folder + "/out"
        let tool = try BackgroundTool(samtrack, [model, frames, "--prompts", set + "/prompts.json", "--out", out, "--no-logits"])
        // Signalled once a frame's mask is staged two folders down (masks/<frame>/object_1.png).
        let staged = tool.waitUntil(seconds: 300) {
            InterruptibleInputs.temporaries(in: folder).contains { staging in
                FileManager.default.fileExists(atPath: folder + "/" + staging + "/masks/00002/object_1.png")
            }
        }
        try #require(staged, "no staged mask appeared: \(tool.report())")
        Self.interrupt(tool, with: signal, expectingNothingLeftIn: folder)
        #expect(!FileManager.default.fileExists(atPath: out), "an --out folder appeared")
    }

    @Test("samrun: a model truncated in place while it is mapped ends with exit 2 naming the model, not SIGBUS")
    func modelTruncatedWhileMapped() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = folder + "/model.samw"
        try FileManager.default.copyItem(atPath: try Hostile.goodModel.get(), toPath: model)
        let photo = try InterruptibleInputs.largePhoto.get()
        let out = folder + "/out"
        let tool = try BackgroundTool(samrun, [model, photo, "--point", "3000,2000", "--out", out])
        // The model is mapped before the photo is read; decoding the large photo leaves time to truncate it.
        let mapped = tool.waitUntil(seconds: 300) {
            ((try? String(contentsOfFile: "/proc/\(tool.pid)/maps", encoding: .utf8)) ?? "").contains(model)
        }
        try #require(mapped, "\(model) was never mapped: \(tool.report())")
        try #require(truncate(model, 0) == 0, "cannot truncate \(model): \(String(cString: strerror(errno)))")
        let ending = tool.waitForEnd()
        #expect(ending == .exited(2), "\(tool.report())")
        #expect(tool.stderr.contains("samrun: \(model): the file was truncated or changed while it was mapped"), "\(tool.report())")
        #expect(!FileManager.default.fileExists(atPath: out), "an --out folder appeared")
        #expect(InterruptibleInputs.temporaries(in: folder).isEmpty, "left \(InterruptibleInputs.temporaries(in: folder))")
    }
}

/// Inputs on which the tools work long enough to be interrupted in the middle.
enum InterruptibleInputs {
    /// Names in `folder` of temporaries (`NAME.tmp-PID-RANDOM`, files or staging folders).
    static func temporaries(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.contains(".tmp-") }
    }

    /// vit_tiny widened to 512 channels with 16x MLPs (zero weights, ~150 MB): written to a .samw, it
    /// takes long enough to be signalled while the temporary is written. Made once per test process.
    static let wideModel: Result<(weights: String, config: String), Error> = Result {
        let folder = try TestPaths.temporaryFolder("samsignal-model")
        let (width, heads, mlpRatio) = (512, 8, 16)
        let hidden = width * mlpRatio, headWidth = width / heads
        var configuration = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: TestPaths.vitTinyReferences + "/config.json"))) as? [String: Any])
        var encoder = try #require(configuration["imageEncoder"] as? [String: Any])
        encoder["embedDim"] = width
        encoder["numHeads"] = heads
        encoder["mlpRatio"] = Double(mlpRatio)
        configuration["imageEncoder"] = encoder
        let config = folder + "/config.json"
        try JSONSerialization.data(withJSONObject: configuration).write(to: URL(fileURLWithPath: config))

        let tensors = try HDF5Builder.withLibrary { try HDF5File(path: TestPaths.vitTinyReferences + "/sam.h5").readAll() }
        // The image encoder's shapes at the new width (the neck's output, 32 channels, feeds the decoder unchanged).
        func widened(_ name: String, _ shape: [Int]) -> [Int] {
            guard name.hasPrefix("image_encoder."), !name.hasPrefix("image_encoder.neck.1"),
                  !name.hasPrefix("image_encoder.neck.2"), !name.hasPrefix("image_encoder.neck.3") else { return shape }
            if name.hasSuffix("neck.0.weight") { return [shape[0], width, 1, 1] }
            if name.hasSuffix("patch_embed.proj.weight") { return [width] + shape.dropFirst() }
            if name.hasSuffix("pos_embed") { return shape.dropLast() + [width] }
            if name.contains(".rel_pos_") { return [shape[0], headWidth] }
            if name.hasSuffix("qkv.weight") { return [3 * width, width] }
            if name.hasSuffix("qkv.bias") { return [3 * width] }
            if name.hasSuffix("lin1.weight") { return [hidden, width] }
            if name.hasSuffix("lin1.bias") { return [hidden] }
            if name.hasSuffix("lin2.weight") { return [width, hidden] }
            if name.hasSuffix("proj.weight") { return [width, width] }
            return [width]  // biases and norms of width channels
        }
        let weights = folder + "/wide.h5"
        let builder = try HDF5Builder(path: weights)
        for (name, tensor) in tensors.sorted(by: { $0.key < $1.key }) {
            let shape = widened(name, tensor.shape)
            let values = shape == tensor.shape ? tensor.floats() : [Float](repeating: 0, count: shape.reduce(1, *))
            try builder.dataset("/" + name, shape: shape, values: values)
        }
        builder.close()
        return (weights, config)
    }

    /// A 6000 x 4000 PNG: samrun spends seconds decoding, resizing and writing masks of this size.
    static let largePhoto: Result<String, Error> = Result {
        let (width, height) = (6000, 4000)
        var random = SplitMix64(seed: 8)
        let noise = (0..<4096).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let pixels = [UInt8](unsafeUninitializedCapacity: width * height * 3) { buffer, count in
            for y in 0..<height {
                for x in 0..<width {
                    let at = (y * width + x) * 3
                    buffer[at] = UInt8(truncatingIfNeeded: x / 24)
                    buffer[at + 1] = UInt8(truncatingIfNeeded: y / 16)
                    buffer[at + 2] = noise[(x &* 31 &+ y &* 17) & 4095]
                }
            }
            count = width * height * 3
        }
        let path = try TestPaths.temporaryFolder("samsignal-photo") + "/large.png"
        try ImageIO.writePNG(try RGBImage(width: width, height: height, pixels: pixels), to: path)
        return path
    }
}

/// A tool running in the background, to be signalled, with SIGINT and SIGTERM at their default actions
/// and no signal blocked (a test runner started in the background by a shell ignores SIGINT, and its
/// children would inherit that). Its stdout goes to /dev/null, its stderr to a file.
final class BackgroundTool {
    enum Ending: Equatable, CustomStringConvertible {
        case exited(Int32), signalled(Int32)
        var description: String {
            switch self {
            case .exited(let status): "exit \(status)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    struct SpawnFailed: Error, CustomStringConvertible { let description: String }

    let name: String
    let pid: pid_t
    private let errorFile: String
    private(set) var ending: Ending?

    init(_ tool: CommandLineTool, _ arguments: [String]) throws {
        name = tool.name
        let binary = try tool.path()
        errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("samsignal-\(UUID().uuidString).err").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errorFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t(), none = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv: [UnsafeMutablePointer<CChar>?] = ([binary] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, binary, &actions, &attributes, argv, environ)
        guard spawned == 0 else { throw SpawnFailed(description: "cannot start \(binary): \(String(cString: strerror(spawned)))") }
        self.pid = pid
    }

    deinit {
        if ending == nil {
            kill(pid, SIGKILL)
            _ = waitForEnd()
        }
        unlink(errorFile)
    }

    var stderr: String { (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? "" }

    func report() -> String { "\(name) \(ending.map { "ended: \($0)" } ?? "still running")\nstderr: \(stderr.suffix(2000))" }

    /// Polls `condition` every millisecond: true once it holds; false when the tool ended first or
    /// `seconds` passed.
    func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            if reap() { return false }
            usleep(1000)
        }
        return false
    }

    func send(_ signal: Int32) { kill(pid, signal) }

    /// Waits for the tool to end (it is killed after two minutes: a hang fails the test, not the suite).
    func waitForEnd() -> Ending {
        let deadline = Date().addingTimeInterval(120)
        while !reap() {
            if Date() > deadline { kill(pid, SIGKILL) }
            usleep(2000)
        }
        return ending!
    }

    /// True once the tool has ended (its ending recorded).
    private func reap() -> Bool {
        if ending != nil { return true }
        var status: Int32 = 0
        let waited = waitpid(pid, &status, WNOHANG)
        guard waited == pid else { return false }
        ending = status & 0x7F != 0 ? .signalled(status & 0x7F) : .exited((status >> 8) & 0xFF)
        return true
    }
}
