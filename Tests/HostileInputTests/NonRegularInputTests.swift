import Foundation
import SAMTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Only regular files are read: a FIFO, a device or a socket given as any input of any tool is
/// refused at once ("not a regular file (a FIFO)"), never opened for reading or waited on. And an
/// output's temporary cannot be redirected by a link planted under a temporary's name.
@Suite("Hostile inputs: FIFOs, devices and sockets as inputs; links planted at temporaries", .serialized)
struct NonRegularInputTests {
    /// A listening-less UNIX socket bound at `path` (the file stays after the descriptor closes).
    static func socketFile(at path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }

    @Test("every tool, every input: a FIFO, /dev/zero or a socket is 'not a regular file', at once")
    func everyInput() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get()
        let h5 = HostileCorpus.tiny + "/mobile_sam.h5", config = HostileCorpus.tiny + "/config.json"
        func fifo(_ name: String) -> String {
            let path = folder + "/" + name
            #expect(mkfifo(path, 0o600) == 0)
            return path
        }
        let socketPath = folder + "/config.sock.json"
        #expect(Self.socketFile(at: socketPath))
        let inFolder = folder + "/exports"
        try FileManager.default.createDirectory(atPath: inFolder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: HostileCorpus.tiny + "/PromptEncoder.onnx", toPath: inFolder + "/PromptEncoder.onnx")
        #expect(mkfifo(inFolder + "/config.json", 0o600) == 0)
        let output = folder + "/out.samw"
        let runs: [HostileRun] = [
            HostileRun(label: "FIFO as the ONNX model", tool: samconvert, arguments: [fifo("model.onnx"), "--out", output],
                       mentions: ["model.onnx", "a FIFO"], output: output),
            HostileRun(label: "FIFO as the HDF5 state dict", tool: samconvert, arguments: [fifo("weights.h5"), "--out", output],
                       mentions: ["weights.h5", "a FIFO"], output: output),
            HostileRun(label: "FIFO as --image-pe", tool: samconvert,
                       arguments: [h5, "--config", config, "--image-pe", fifo("image_points_embeddings.bin"), "--out", output],
                       mentions: ["image_points_embeddings.bin", "a FIFO"], output: output),
            HostileRun(label: "FIFO as --config", tool: samconvert, arguments: [h5, "--config", fifo("config.json"), "--out", output],
                       mentions: ["config.json", "not a regular file (a FIFO)"], output: output),
            HostileRun(label: "/dev/zero as --config", tool: samconvert, arguments: [h5, "--config", "/dev/zero", "--out", output],
                       mentions: ["/dev/zero", "not a regular file (a character device)"], output: output),
            HostileRun(label: "a socket as --config", tool: samconvert, arguments: [h5, "--config", socketPath, "--out", output],
                       mentions: ["config.sock.json", "not a regular file (a socket)"], output: output),
            HostileRun(label: "FIFO config.json in an input folder", tool: samconvert, arguments: [inFolder, "--out", output],
                       mentions: ["config.json", "a FIFO"], output: output),
            HostileRun(label: "FIFO as the file to inspect", tool: saminspect, arguments: ["--stats", fifo("inspect.h5")],
                       mentions: ["inspect.h5", "a FIFO"]),
            HostileRun(label: "FIFO as the .samw model", tool: samrun, arguments: [fifo("model.samw"), Hostile.photo, "--point", "1,1",
                                                                                    "--out", folder + "/run"],
                       mentions: ["model.samw", "a FIFO"], output: folder + "/run"),
            HostileRun(label: "FIFO as the image", tool: samrun, arguments: [model, fifo("photo.png"), "--point", "1,1", "--out", folder + "/run"],
                       mentions: ["photo.png", "not a regular file"], output: folder + "/run"),
            HostileRun(label: "FIFO as --mask-input", tool: samrun,
                       arguments: [model, Hostile.photo, "--point", "1,1", "--mask-input", fifo("mask.npy"), "--out", folder + "/run"],
                       mentions: ["mask.npy", "not a regular file"], output: folder + "/run"),
            HostileRun(label: "FIFO as the .samw model", tool: samverify, arguments: [folder + "/model.samw", "--references", HostileCorpus.tiny],
                       mentions: ["model.samw", "a FIFO"]),
        ]
        for run in runs { try run.check() }
    }

    @Test("a link planted at a temporary's name of samconvert's output is neither followed nor removed")
    func plantedTemporaryLink() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let victim = folder + "/victim.txt"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
        let output = folder + "/out.samw"
        // Under the name a dead process's temporary would have (the next writer cleans those up),
        // and under names of this test process (alive, so not stale).
        let planted = [output + ".tmp-999999-1f", output + ".tmp-\(getpid())-2e"]
        for name in planted { #expect(symlink(victim, name) == 0) }
        let run = try samconvert.run([HostileCorpus.tiny + "/mobile_sam.h5", "--config", HostileCorpus.tiny + "/config.json", "--out", output])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me")
        for name in planted {
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: name)) == victim, "\(name) was touched")
        }
        var status = stat()
        #expect(lstat(output, &status) == 0 && status.st_mode & S_IFMT == S_IFREG, "the output is a regular file of its own")
    }
}
