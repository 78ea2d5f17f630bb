import Foundation
import SAMFiles
import SAMFormats
import SAMTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Hostile ONNX files written as protobuf bytes in the test (`HostileONNX`): nesting past what
/// libprotobuf-c's recursion survives, duplicate and mistyped initializers, external data that does
/// not match its declaration, graphs with nothing in them, and very many initializers.
@Suite("Hostile ONNX: nesting, names, types, external data, size", .serialized)
struct ONNXHostileTests {
    func write(_ bytes: Data, _ name: String, in folder: String) throws -> String {
        let path = folder + "/" + name
        try bytes.write(to: URL(fileURLWithPath: path))
        return path
    }

    func refusedByBoth(_ label: String, _ path: String, mentions: [String], folder: String, stats: Bool = true) throws {
        let name = (path as NSString).lastPathComponent
        try HostileRun(label: label, tool: saminspect, arguments: (stats ? ["--stats"] : []) + [path], mentions: [name] + mentions).check()
        let output = folder + "/out.samw"
        try HostileRun(label: label, tool: samconvert, arguments: [path, "--out", output], mentions: [name] + mentions, output: output).check()
    }

    @Test("subgraphs nested 20,000 and 33 deep, types nested 20,000 deep: refused before unpacking; 32 deep is read")
    func nesting() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let deep = try write(HostileONNX.nestedIfGraphs(depth: 20_000), "if-20000.onnx", in: folder)
        try refusedByBoth("ONNX If subgraphs nested 20,000 deep", deep, mentions: ["100 levels", "[limitExceeded]"], folder: folder)
        let over = try write(HostileONNX.nestedIfGraphs(depth: 33), "if-33.onnx", in: folder)
        try refusedByBoth("ONNX If subgraphs nested 33 deep (101 levels)", over, mentions: ["100 levels"], folder: folder)
        let types = try write(HostileONNX.nestedSequenceType(depth: 20_000), "sequence-20000.onnx", in: folder)
        try refusedByBoth("ONNX sequence types nested 20,000 deep", types, mentions: ["100 levels"], folder: folder)
        // 32 levels of subgraphs are 98 messages deep: within the limit, read (and listed).
        let within = try write(HostileONNX.nestedIfGraphs(depth: 32), "if-32.onnx", in: folder)
        let listed = try saminspect.run([within])
        #expect(listed.status == 0 && listed.stdout.contains("If 1"), "\(listed.stderr)")
    }

    @Test("two initializers of one name, an empty graph, weights of the wrong type, overflowing dims")
    func namesAndTypes() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let name = "mask_decoder.iou_token.weight"
        let zeros = HostileONNX.floats([Float](repeating: 0, count: 128)), ones = HostileONNX.floats([Float](repeating: 1, count: 128))
        let duplicate = try write(HostileONNX.model(HostileONNX.graph(initializers: [
            HostileONNX.tensor(name, dims: [4, 32], raw: zeros), HostileONNX.tensor(name, dims: [4, 32], raw: ones),
        ])), "duplicate.onnx", in: folder)
        try refusedByBoth("ONNX two initializers of one name", duplicate,
                          mentions: ["initializer 0", "initializer 1", "[duplicateName]"], folder: folder)

        let empty = try write(HostileONNX.model(HostileONNX.graph()), "empty.onnx", in: folder)
        try HostileRun(label: "ONNX empty graph", tool: samconvert, arguments: [empty, "--out", folder + "/out.samw"],
                       mentions: ["empty.onnx", "no weights"], output: folder + "/out.samw").check()

        let wrong: [(String, UInt64, Data, [String])] = [
            ("INT64", HostileONNX.int64, Data(count: 128 * 8), []),
            ("UINT8", HostileONNX.uint8, Data(count: 128), []),
            ("BOOL", HostileONNX.bool, Data(count: 128), []),
            ("STRING", HostileONNX.string, Data(), (0..<128).map { "s\($0)" }),
        ]
        for (type, code, raw, strings) in wrong {
            let tensor = HostileONNX.tensor(name, type: code, dims: [4, 32], raw: strings.isEmpty ? raw : nil, strings: strings)
            let path = try write(HostileONNX.model(HostileONNX.graph(initializers: [tensor])), "type-\(type).onnx", in: folder)
            try HostileRun(label: "ONNX weight stored as \(type)", tool: samconvert, arguments: [path, "--out", folder + "/out.samw"],
                           mentions: [path, "element type \(type)", name, "[wrongElementType]"], output: folder + "/out.samw").check()
        }
        let overflow = try write(HostileONNX.model(HostileONNX.graph(initializers: [
            HostileONNX.tensor(name, dims: [1 << 36, 1 << 36], raw: zeros),
        ])), "overflow-dims.onnx", in: folder)
        try refusedByBoth("ONNX dims whose product overflows", overflow, mentions: ["overflow"], folder: folder)
    }

    @Test("external data: a 4 GiB sparse file whose length disagrees with the shape, a FIFO in the folder, an unused FIFO beside")
    func externalData() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let name = "mask_decoder.iou_token.weight"
        let sparse = folder + "/weights.bin"
        #expect(FileManager.default.createFile(atPath: sparse, contents: nil))
        #expect(truncate(sparse, 4 << 30) == 0)
        let mismatch = try write(HostileONNX.model(HostileONNX.graph(initializers: [
            HostileONNX.tensor(name, dims: [4, 32], external: ("weights.bin", 0, 4 << 30)),
        ])), "length-mismatch.onnx", in: folder)
        try refusedByBoth("ONNX external data, 4 GiB sparse, length != shape", mismatch,
                          mentions: ["external length 4294967296", "needs 512", "[sizeMismatch]"], folder: folder)
        let declaredHuge = try write(HostileONNX.model(HostileONNX.graph(initializers: [
            HostileONNX.tensor(name, dims: [1 << 28], external: ("weights.bin", 0, 1024)),
        ])), "shape-mismatch.onnx", in: folder)
        try refusedByBoth("ONNX external data, shape 1 GiB, length 1024", declaredHuge,
                          mentions: ["external length 1024", "[sizeMismatch]"], folder: folder)

        let pipe = folder + "/pipe.bin"
        #expect(mkfifo(pipe, 0o600) == 0)
        let fromFIFO = try write(HostileONNX.model(HostileONNX.graph(initializers: [
            HostileONNX.tensor(name, dims: [4, 32], external: ("pipe.bin", 0, 512)),
        ])), "external-fifo.onnx", in: folder)
        try refusedByBoth("ONNX external data that is a FIFO in the model's folder", fromFIFO,
                          mentions: ["pipe.bin", "not a regular file (a FIFO)"], folder: folder)

        // A FIFO under the usual external-data name beside a model that keeps its weights inline:
        // nothing reads it, and provenance lists only the files the conversion read.
        let model = folder + "/PromptEncoder.onnx"
        try FileManager.default.copyItem(atPath: HostileCorpus.tiny + "/PromptEncoder.onnx", toPath: model)
        #expect(mkfifo(model + ".data", 0o600) == 0)
        #expect(mkfifo(folder + "/PromptEncoder.data", 0o600) == 0)
        let output = folder + "/prompt.samw"
        let converted = try HostileRun(label: "ONNX beside an unused FIFO named PromptEncoder.onnx.data", tool: samconvert,
                                       arguments: [model, "--out", output], expected: [0]).check()
        #expect(converted.status == 0, "\(converted.stderr)")
        if converted.status == 0 {
            let sources = try SAMWFile(path: output).metadata["provenance"]?["sources"]
            guard case .array(let entries) = sources else { Issue.record("no provenance in \(output)"); return }
            #expect(entries.compactMap { if case .string(let path) = $0["path"] { path } else { nil } } == [model])
        }
    }

    @Test("an unused tensor whose external data lies outside the folder: never read, never hashed")
    func unusedOutsideData() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        for location in ["/etc/passwd", "../../etc/hostname"] {
            // PromptEncoder.onnx with a second GraphProto appended: protobuf merges it into the first,
            // adding one initializer that nothing reads and no rule maps.
            let extra = HostileONNX.graph(initializers: [HostileONNX.tensor("junk.table", dims: [4], external: (location, 0, 16))])
            var appended = Proto()
            appended.message(7, extra)
            let model = folder + "/PromptEncoder.onnx"
            try (Data(contentsOf: URL(fileURLWithPath: HostileCorpus.tiny + "/PromptEncoder.onnx")) + appended.bytes)
                .write(to: URL(fileURLWithPath: model))
            let output = folder + "/prompt.samw"
            let run = try HostileRun(label: "ONNX unused tensor with external data at \(location), --allow-unmapped", tool: samconvert,
                                     arguments: [model, "--allow-unmapped", "--out", output, "--force"], expected: [0]).check()
            guard run.status == 0 else { continue }
            let sources = try SAMWFile(path: output).metadata["provenance"]?["sources"]
            guard case .array(let entries) = sources else { Issue.record("no provenance in \(output)"); continue }
            #expect(entries.compactMap { if case .string(let path) = $0["path"] { path } else { nil } } == [model], "\(entries)")
        }
    }

    @Test("--stats streams a tensor mapped from a 128 MiB external file: it is not held whole")
    func statsStream() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let sparse = folder + "/weights.bin"
        #expect(FileManager.default.createFile(atPath: sparse, contents: nil))
        #expect(truncate(sparse, 128 << 20) == 0)
        let path = try write(HostileONNX.model(HostileONNX.graph(initializers: [
            HostileONNX.tensor("mask_decoder.iou_token.weight", dims: [32 << 20], external: ("weights.bin", 0, nil)),
        ])), "sparse.onnx", in: folder)
        // Held whole, its pages alone would be 128 MB on top of the tool's ~30 MB: the bound is below that.
        try HostileRun(label: "ONNX --stats of a 128 MiB external tensor", tool: saminspect, arguments: ["--stats", path],
                       expected: [0], seconds: 30, megabytes: 110).check()
    }

    /// Linear time is judged against the same tools on a tenth of the initializers in the same test,
    /// not against a fixed number of seconds: a debug build on a busy 2-core machine takes 4-5 s
    /// over the 100,000 (a quadratic step would take about 100 times the tenth's time, linear 10).
    @Test("100,000 initializers: listed and refused in linear time")
    func manyInitializers() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let two = HostileONNX.floats([1, 2])
        func model(_ count: Int) throws -> String {
            let initializers = (0..<count).map { HostileONNX.tensor("weight\($0)", dims: [2], raw: two) }
            return try write(HostileONNX.model(HostileONNX.graph(initializers: initializers)), "many\(count).onnx", in: folder)
        }
        var times: [Int: (listed: Double, refused: Double)] = [:]
        for count in [10_000, 100_000] {
            let path = try model(count)
            let listed = try HostileRun(label: "ONNX \(count) initializers", tool: saminspect, arguments: [path], expected: [0],
                                        seconds: 25).check()
            let refused = try HostileRun(label: "ONNX \(count) initializers", tool: samconvert,
                                         arguments: [path, "--out", folder + "/out.samw"],
                                         mentions: ["many\(count).onnx", "\(count) weight-like tensor(s)"], output: folder + "/out.samw",
                                         seconds: 25).check()
            times[count] = (listed.seconds, refused.seconds)
        }
        let (small, large) = (try #require(times[10_000]), try #require(times[100_000]))
        // Ten times the initializers: at most 20 times the time (process start-up is in both).
        #expect(large.listed < 20 * small.listed, "saminspect: \(small.listed) s for 10,000, \(large.listed) s for 100,000")
        #expect(large.refused < 20 * small.refused, "samconvert: \(small.refused) s for 10,000, \(large.refused) s for 100,000")
    }
}
