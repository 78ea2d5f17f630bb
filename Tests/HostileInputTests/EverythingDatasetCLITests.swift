import Foundation
import SAMImage
import SAMImageFiles
import SAMTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `samrun MODEL --everything --images DIR_OR_LIST --out DIR [--shard I/N] [--coco FILE]` on the
/// committed tiny model and twelve small generated images: shards run as separate processes and merged
/// give the file one process gives, byte for byte; a run killed part-way resumes to the same file; bad
/// input is exit 2 within a second, naming the option or file, with nothing written.
@Suite("EverythingDataset CLI: shards, resume, COCO merge, bad input", .serialized)
struct EverythingDatasetCLITests {
    /// A small grid with every mask kept, so each image has annotations to merge.
    static let generator = ["--points-per-side", "4", "--pred-iou-thresh", "0", "--stability-score-thresh", "0", "--box-nms-thresh", "0.99"]

    /// Twelve images of varied sizes and content (shapes, rings, stripes, noise; the demo photo and a
    /// JPEG among them), in a fresh folder.
    static func makeImages(in folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var random = SplitMix64(seed: 0xA1B2)
        for index in 0..<10 {
            let width = 40 + (index % 3) * 12, height = 32 + (index % 4) * 8
            var image = RGBImage(width: width, height: height)
            for y in 0..<height {
                for x in 0..<width {
                    let value: (Int, Int, Int)
                    switch index % 5 {
                    case 0:  // two blocks on a background
                        let inA = x > width / 5 && x < width / 2 && y > height / 4 && y < 3 * height / 4
                        let inB = x > 3 * width / 5 && y > height / 3
                        value = inA ? (220, 40, 40) : inB ? (30, 60, 200) : (90 + index, 200, 90)
                    case 1:  // rings
                        let d = Int((Double((x - width / 2) * (x - width / 2) + (y - height / 2) * (y - height / 2))).squareRoot())
                        value = (d / 6) % 2 == 0 ? (250, 250, 250 - index) : (10, 10, 10)
                    case 2:  // stripes
                        value = (x / (3 + index)) % 2 == 0 ? (200, 180, 20) : (20, 40, 160)
                    case 3:  // noise
                        let v = Int(random.next() % 256)
                        value = (v, 255 - v, (v * 7) % 256)
                    default:  // a gradient with a disc
                        let inside = (x - width / 3) * (x - width / 3) + (y - height / 2) * (y - height / 2) < height * height / 9
                        value = inside ? (255, 255, 0) : (x * 255 / width, y * 255 / height, 128)
                    }
                    image.pixels[(y * width + x) * 3] = UInt8(value.0)
                    image.pixels[(y * width + x) * 3 + 1] = UInt8(value.1)
                    image.pixels[(y * width + x) * 3 + 2] = UInt8(value.2)
                }
            }
            try ImageIO.writePNG(image, to: folder + "/img_\(String(format: "%02d", index)).png")
        }
        try FileManager.default.copyItem(atPath: Hostile.photo, toPath: folder + "/photo.png")
        try FileManager.default.copyItem(atPath: HostileCorpus.root + "/Tests/SAMImageTests/Fixtures/progressive.jpg",
                                         toPath: folder + "/progressive.jpg")
    }

    /// One process over the whole dataset, made once: its images, folder and merged file.
    struct Reference {
        var folder: String
        var images: String
        var out: String
        var coco: Data
    }

    static let reference: Result<Reference, Error> = Result {
        let folder = try Hostile.folder()
        let images = folder + "/images"
        try makeImages(in: images)
        let out = folder + "/one"
        let run = try samrun.run([try Hostile.goodModel.get(), "--everything", "--images", images, "--out", out,
                                  "--coco", folder + "/one.json"] + generator)
        guard run.status == 0 else { throw Failed(description: "one-process run: exit \(run.status)\n\(run.stderr)") }
        return Reference(folder: folder, images: images, out: out, coco: try Hostile.read(folder + "/one.json"))
    }

    struct Failed: Error, CustomStringConvertible { var description: String }

    /// samrun started with `arguments`, stdout and stderr to files beside `log`.
    static func start(_ arguments: [String], log: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try samrun.path())
        process.arguments = arguments
        for stream in [".out", ".err"] where !FileManager.default.createFile(atPath: log + stream, contents: nil) {
            throw Failed(description: "cannot create \(log + stream)")
        }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: log + ".out"))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log + ".err"))
        try process.run()
        return process
    }

    static func jsons(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
    }

    @Test("one process: a JSON per image equal to masks.json's list, a COCO file with every image and annotation")
    func oneProcess() throws {
        let reference = try Self.reference.get()
        #expect(Self.jsons(in: reference.out).count == 12)
        struct COCO: Decodable {
            struct Image: Decodable { var id: Int; var file_name: String; var width: Int; var height: Int }
            struct Annotation: Decodable { var id: Int; var image_id: Int }
            var images: [Image]
            var annotations: [Annotation]
        }
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true  // stability scores may be NaN, written bare as Python's json writes them
        let coco = try decoder.decode(COCO.self, from: reference.coco)
        #expect(coco.images.map(\.id) == Array(1...12))
        #expect(coco.images.first?.file_name == "img_00.png")
        #expect(coco.images.last?.file_name == "progressive.jpg")
        let photo = coco.images.first { $0.file_name == "photo.png" }
        #expect(photo?.width == 128 && photo?.height == 85)
        let count = coco.annotations.count
        #expect(count >= 24, "the merge must hold annotations to compare; it has \(count)")
        #expect(coco.annotations.map(\.id) == Array(1...max(count, 1)).prefix(count).map { $0 })
        let imageIds = coco.annotations.map(\.image_id)
        #expect(imageIds == imageIds.sorted() && Set(imageIds).count >= 6)
        // An image's JSON is what masks.json holds for that image alone.
        let model = try Hostile.goodModel.get()
        let single = reference.folder + "/single"
        let run = try samrun.run([model, reference.images + "/img_01.png", "--everything", "--out", single] + Self.generator)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Hostile.read(single + "/masks.json") == Hostile.read(reference.out + "/img_01.json"))
    }

    @Test("four shards as separate processes, then one --coco run: the one-process file, byte for byte")
    func shardsThenMerge() throws {
        let reference = try Self.reference.get()
        let model = try Hostile.goodModel.get()
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let out = folder + "/sharded"
        let base = [model, "--everything", "--images", reference.images, "--out", out] + Self.generator
        // All four at once, into one folder that none of them has made yet.
        let processes = try (0..<4).map { index in try Self.start(base + ["--shard", "\(index)/4"], log: folder + "/shard\(index)") }
        for (index, process) in processes.enumerated() {
            process.waitUntilExit()
            let stderr = (try? String(contentsOfFile: folder + "/shard\(index).err", encoding: .utf8)) ?? ""
            #expect(process.terminationReason == .exit && process.terminationStatus == 0, "shard \(index)/4: \(stderr)")
            #expect(stderr.contains("shard \(index)/4: 3;"), "shard \(index)/4: \(stderr)")
        }
        #expect(Self.jsons(in: out) == Self.jsons(in: reference.out))
        for name in Self.jsons(in: out) {
            #expect(try Hostile.read(out + "/" + name) == Hostile.read(reference.out + "/" + name), "\(name)")
        }
        let merge = try samrun.run(base + ["--coco", folder + "/merged.json"])
        #expect(merge.status == 0, "\(merge.stderr)")
        #expect(merge.stderr.contains("12 already segmented, 0 to segment"), "\(merge.stderr)")
        #expect(try Hostile.read(folder + "/merged.json") == reference.coco, "the merge of four shards differs from one process's file")

        // A shard asked to merge before the others ran: its images are segmented, the merge is refused.
        let early = folder + "/early"
        let refused = try samrun.run([model, "--everything", "--images", reference.images, "--out", early, "--shard", "2/4",
                                      "--coco", folder + "/early.json"] + Self.generator)
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("9 of 12 images have no JSON"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/early.json"))
        #expect(Self.jsons(in: early) == ["img_02.json", "img_06.json", "photo.json"])
    }

    @Test("a run SIGKILLed after its first JSON, restarted: whole JSONs only, and the same COCO file")
    func killedAndResumed() throws {
        let reference = try Self.reference.get()
        let model = try Hostile.goodModel.get()
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let out = folder + "/resumed"
        let arguments = [model, "--everything", "--images", reference.images, "--out", out, "--coco", folder + "/resumed.json"]
            + Self.generator
        let process = try Self.start(arguments, log: folder + "/killed")
        let started = Date()
        while Self.jsons(in: out).isEmpty && process.isRunning && Date().timeIntervalSince(started) < 60 { usleep(1000) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal, "the run ended before it could be killed")
        let written = Self.jsons(in: out)
        #expect(!written.isEmpty && written.count < 12, "killed with \(written.count) JSONs")
        for name in written {
            #expect(try Hostile.read(out + "/" + name) == Hostile.read(reference.out + "/" + name), "\(name) is not whole")
        }
        #expect(!FileManager.default.fileExists(atPath: folder + "/resumed.json"))

        let resumed = try samrun.run(arguments)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("\(written.count) already segmented, \(12 - written.count) to segment"), "\(resumed.stderr)")
        #expect(try Hostile.read(folder + "/resumed.json") == reference.coco, "the resumed run's file differs from one process's")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "temporaries left: \(leftovers)")
    }

    @Test("bad input: exit 2 within a second, naming the option or file, nothing written")
    func badInput() throws {
        let reference = try Self.reference.get()
        let model = try Hostile.goodModel.get()
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let images = reference.images
        let out = folder + "/out"
        let coco = folder + "/coco.json"
        try FileManager.default.createDirectory(atPath: folder + "/empty", withIntermediateDirectories: true)
        try Data("images/img_00.png\n# a comment\nimages/missing.png\n".utf8).write(to: URL(fileURLWithPath: folder + "/missing.txt"))
        try Data("notes\n".utf8).write(to: URL(fileURLWithPath: folder + "/notes.png"))
        try Data("images/img_00.png\nnotes.png\n".utf8).write(to: URL(fileURLWithPath: folder + "/nonimage.txt"))
        try FileManager.default.createSymbolicLink(atPath: folder + "/images", withDestinationPath: images)
        try FileManager.default.createDirectory(atPath: folder + "/clash", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: images + "/img_00.png", toPath: folder + "/clash/a.png")
        try FileManager.default.copyItem(atPath: images + "/progressive.jpg", toPath: folder + "/clash/a.jpg")

        let dataset = [model, "--everything", "--images", images, "--out", out]
        let cases: [(String, [String], [String])] = [
            ("--points-per-side 0", dataset + ["--points-per-side", "0"], ["--points-per-side"]),
            ("--points-per-side 100000", dataset + ["--points-per-side", "100000"], ["--points-per-side", "100000"]),
            ("--pred-iou-thresh 1.5", dataset + ["--pred-iou-thresh", "1.5"], ["--pred-iou-thresh"]),
            ("--stability-score-thresh nan", dataset + ["--stability-score-thresh", "nan"], ["--stability-score-thresh"]),
            ("--box-nms-thresh -0.5", dataset + ["--box-nms-thresh=-0.5"], ["--box-nms-thresh"]),
            ("--crop-nms-thresh 2", dataset + ["--crop-nms-thresh", "2"], ["--crop-nms-thresh"]),
            ("a list naming a missing file", [model, "--everything", "--images", folder + "/missing.txt", "--out", out],
             ["missing.png", "line 3"]),
            ("a list naming a non-image", [model, "--everything", "--images", folder + "/nonimage.txt", "--out", out],
             ["notes.png", "not a PNG or JPEG"]),
            ("--shard 5/4", dataset + ["--shard", "5/4"], ["--shard"]),
            ("--shard -1/4", dataset + ["--shard", "-1/4"], ["--shard"]),
            ("--shard 1/0", dataset + ["--shard", "1/0"], ["--shard"]),
            ("--shard abc", dataset + ["--shard", "abc"], ["--shard", "abc"]),
            ("--images with IMAGE", [model, images + "/img_00.png", "--everything", "--images", images, "--out", out],
             ["--images", "IMAGE"]),
            ("--coco without --everything", [model, "--images", images, "--out", out, "--coco", coco], ["--coco", "--everything"]),
            ("--coco with one IMAGE", [model, images + "/img_00.png", "--everything", "--out", out, "--coco", coco],
             ["--coco", "--images"]),
            ("--shard without --images", [model, images + "/img_00.png", "--everything", "--out", out, "--shard", "0/2"], ["--shard"]),
            ("an empty folder", [model, "--everything", "--images", folder + "/empty", "--out", out], ["no images"]),
            ("two images with one stem", [model, "--everything", "--images", folder + "/clash", "--out", out],
             ["a.jpg", "a.png", "a.json"]),
            ("--coco at an image", dataset + ["--coco", images + "/img_03.png"], ["--coco", "img_03.png"]),
            ("--coco at an image's JSON", dataset + ["--coco", out + "/img_03.json"], ["--coco", "img_03"]),
            ("--coco in a missing folder", dataset + ["--coco", folder + "/nowhere/coco.json"], ["--coco", "nowhere"]),
            ("--mask-pngs with --images", dataset + ["--mask-pngs"], ["--mask-pngs"]),
            ("a missing model", [folder + "/missing.samw", "--everything", "--images", images, "--out", out], ["missing.samw"]),
        ]
        let before = try FileManager.default.contentsOfDirectory(atPath: images).sorted()
        for (label, arguments, mentions) in cases {
            try HostileRun(label: "dataset: \(label)", tool: samrun, arguments: arguments, mentions: mentions, output: out,
                           expected: [2], seconds: 1).check()
            #expect(!FileManager.default.fileExists(atPath: coco), "\(label): wrote \(coco)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: images).sorted() == before, "an input folder changed")

        // A directory or a FIFO at an image's JSON name: refused, the folder left as it was.
        try FileManager.default.createDirectory(atPath: out + "/img_04.json/keep", withIntermediateDirectories: true)
        #expect(mkfifo(out + "/img_07.json", 0o600) == 0)
        let snapshot = OutputRuleCLITests.snapshot(out)
        let run = try HostileRun(label: "dataset: a directory and a FIFO at JSON names", tool: samrun, arguments: dataset,
                                 mentions: ["img_04.json", "a directory", "img_07.json", "a FIFO"], expected: [2], seconds: 1).check()
        #expect(run.status == 2)
        #expect(OutputRuleCLITests.snapshot(out) == snapshot, "the output folder changed")
    }
}
