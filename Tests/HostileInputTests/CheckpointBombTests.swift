import Foundation
import SAMTestSupport
import Testing

/// Decompression bombs in `.pth` files through samconvert and saminspect: refused from what the file
/// declares, before anything is inflated (exit 2, the file and the limit named, within a second and
/// under 300 MB); storages no mapped key views are never inflated; memory the machine cannot give is
/// an error naming the file, not a crash.
@Suite("Hostile inputs: .pth decompression bombs and memory budgets", .serialized)
struct CheckpointBombTests {
    /// One real 1 GiB stream of zeros (about 1 MB), shared by the cases.
    static let gibibyte = TorchCheckpointWriter.deflatedZeros(count: 1 << 30)

    static func deflated(_ stream: (compressed: [UInt8], crc32: UInt32), size: Int) -> TorchCheckpointWriter.Member {
        .deflated(compressed: stream.compressed, size: size, crc32: stream.crc32)
    }

    func refusedEverywhere(_ label: String, _ path: String, mentions: [String], folder: String) throws {
        let output = folder + "/out.samw"
        try HostileRun(label: label, tool: samconvert, arguments: [path, "--out", output], mentions: [path] + mentions, output: output,
                       seconds: 1, megabytes: 300).check()
        try HostileRun(label: label, tool: saminspect, arguments: [path], mentions: [path] + mentions, seconds: 1, megabytes: 300).check()
        try HostileRun(label: label + " --stats", tool: saminspect, arguments: [path, "--stats"], mentions: [path] + mentions,
                       seconds: 1, megabytes: 300).check()
    }

    @Test("eight storages really inflating to 1 GiB each (1000:1) under keys no rule maps: refused before inflating")
    func eightGibibytes() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        var writer = TorchCheckpointWriter()
        for index in 0..<8 {
            writer.storages.append(.init(name: "\(index)", elementCount: 1 << 28, member: Self.deflated(Self.gibibyte, size: 1 << 30)))
            writer.views.append(.init(key: "unmapped.table\(index)", storage: "\(index)", shape: [1 << 28]))
        }
        let path = folder + "/eight-gib.pth"
        try writer.write(to: path)
        try refusedEverywhere(".pth 8 x 1 GiB deflated storages", path, mentions: ["8589934592 bytes", "PyTorchLimits.maximumExpansion"],
                              folder: folder)
    }

    @Test("one 1 GiB storage and four transposed [16384,16384] views of it: refused before inflating or copying")
    func transposedViews() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        var writer = TorchCheckpointWriter()
        writer.storages = [.init(name: "0", elementCount: 1 << 28, member: Self.deflated(Self.gibibyte, size: 1 << 30))]
        writer.views = (0..<4).map { .init(key: "image_encoder.blocks.\($0).mlp.lin1.weight", storage: "0", shape: [16384, 16384], strides: [1, 16384]) }
        let path = folder + "/views.pth"
        try writer.write(to: path)
        try refusedEverywhere(".pth 1 GiB storage, 4 transposed views", path, mentions: ["1073741824 bytes", "PyTorchLimits.maximumExpansion"],
                              folder: folder)
    }

    @Test("within the file's expansion bound, a 1 GiB storage under a key no rule maps is never inflated")
    func unmappedNeverInflated() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        var writer = TorchCheckpointWriter()
        let weight = (0..<32).flatMap { withUnsafeBytes(of: Float($0).bitPattern, Array.init) }
        writer.storages = [
            .init(name: "0", elementCount: 1 << 28, member: Self.deflated(Self.gibibyte, size: 1 << 30)),
            .init(name: "1", elementCount: 32, member: .stored(weight)),
        ]
        writer.views = [.init(key: "unmapped.table", storage: "0", shape: [1 << 28]),
                        .init(key: "mask_decoder.iou_token.weight", storage: "1", shape: [1, 32])]
        // 17 MB of stored padding keeps the file's declared expansion (1 GiB / 17 MB) under 64:1.
        writer.extraMembers = [("padding", .stored([UInt8](repeating: 0, count: 17 << 20)))]
        let path = folder + "/within-bound.pth"
        try writer.write(to: path)
        let output = folder + "/out.samw"
        try HostileRun(label: ".pth 1 GiB storage under an unmapped key, within the expansion bound", tool: samconvert,
                       arguments: [path, "--out", output], mentions: [path, "unmapped.table", "no rule maps"], output: output,
                       seconds: 1, megabytes: 300).check()
    }

    @Test("memory the machine cannot give (a 2 GiB storage under a 1.8 GB address-space limit): exit 2 naming the file, no crash")
    func allocationFails() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        var writer = TorchCheckpointWriter()
        // Never inflated: the allocation fails first. 2.1 MB keeps it under deflate's 1032:1 for its 2 GiB.
        let garbage = (0..<(2_100_000)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
        writer.storages = [.init(name: "0", elementCount: 1 << 29, member: .deflated(compressed: garbage, size: 1 << 31, crc32: 0))]
        writer.views = [.init(key: "image_encoder.neck.0.weight", storage: "0", shape: [1 << 29])]
        writer.extraMembers = [("padding", .stored([UInt8](repeating: 0, count: 33 << 20)))]
        let path = folder + "/two-gib.pth", output = folder + "/out.samw"
        try writer.write(to: path)
        let tool = try samconvert.path()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -v 1800000 && exec \"$0\" \"$1\" --out \"$2\"", tool, path, output]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // A hang fails the test instead of stalling the suite.
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 30, execute: watchdog)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        watchdog.cancel()
        #expect(process.terminationReason == .exit && process.terminationStatus == 2, "status \(process.terminationStatus): \(stderr)")
        #expect(stderr.contains(path) && stderr.contains("cannot allocate 2147483648 bytes") && stderr.contains("[out_of_memory]"), "\(stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
