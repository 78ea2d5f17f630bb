import Foundation
import SAMTestSupport
import Testing

/// Hostile images against the samrun binary (CI runs this on the release build): every bomb ends
/// with exit 2, a message with the declared size and the limit, in under 2 s and under 300 MB;
/// valid PNG/JPEG variants still decode; only regular files are read.
@Suite("Hostile images: bombs are refused from the header, quickly and in little memory", .serialized)
struct ImageBombTests {
    static let fixtures = HostileCorpus.root + "/Tests/SAMImageTests/Fixtures"

    struct Bomb: CustomStringConvertible {
        var name: String
        var bytes: Data
        /// Text the message must hold: the declared size, the limit.
        var says: [String]
        var description: String { "\(name) (\(bytes.count) bytes)" }
    }

    static let bombs: [Bomb] = [
        Bomb(name: "png-32768x32768-gray.png", bytes: HostileImages.png(width: 32768, height: 32768, rows: 64),
             says: ["32768x32768", "100000000"]),
        Bomb(name: "png-16384x16384-rgb.png", bytes: HostileImages.png(width: 16384, height: 16384, rgb: true, rows: 16),
             says: ["16384x16384", "100000000"]),
        Bomb(name: "png-just-over-budget.png", bytes: HostileImages.png(width: 20000, height: 5001, rows: 4),
             says: ["20000x5001", "100000000"]),
        Bomb(name: "png-wider-than-any.png", bytes: HostileImages.png(width: 1_000_000, height: 1), says: ["1000000x1"]),
        Bomb(name: "jpeg-16384x16384.jpg", bytes: HostileImages.baselineJPEG(width: 16384, height: 16384),
             says: ["16384x16384", "100000000"]),
        Bomb(name: "jpeg-65000x65000.jpg", bytes: HostileImages.baselineJPEG(width: 65000, height: 65000), says: ["65000x65000"]),
        Bomb(name: "jpeg-progressive-16384x16384-3000-scans.jpg",
             bytes: HostileImages.repeatedScanJPEG(width: 16384, height: 16384, repeats: 3000), says: ["16384x16384", "100000000"]),
        // Within the pixel budget: only the scan limit stops it.
        Bomb(name: "jpeg-progressive-4096x4096-3000-scans.jpg",
             bytes: HostileImages.repeatedScanJPEG(width: 4096, height: 4096, repeats: 3000), says: ["4096x4096", "100 scans"]),
        Bomb(name: "jpeg-progressive-8192x8192-3000-scans.jpg",
             bytes: HostileImages.repeatedScanJPEG(width: 8192, height: 8192, repeats: 3000), says: ["8192x8192", "100 scans"]),
    ]

    @Test("Each bomb: exit 2 naming its size and the limit, < 2 s, < 300 MB, nothing written", arguments: bombs)
    func bomb(_ bomb: Bomb) throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get()
        let input = folder + "/" + bomb.name
        try bomb.bytes.write(to: URL(fileURLWithPath: input))
        let run = try samrun.measured([model, input, "--point", "1,1", "--out", folder + "/run"], timeout: 60)
        print("note: \(bomb): exit \(run.status), \(String(format: "%.2f", run.seconds)) s, "
              + "\(String(format: "%.0f", run.maxResidentMegabytes)) MB peak")
        #expect(run.status == 2 && !run.crashed && !run.timedOut, "\(bomb): status \(run.status)\n\(run.stderr)")
        #expect(run.seconds < 2, "\(bomb) took \(run.seconds) s")
        #expect(run.maxResidentMegabytes < 300, "\(bomb) peaked at \(run.maxResidentMegabytes) MB")
        for text in bomb.says { #expect(run.stderr.contains(text), "\(bomb): message does not say \(text): \(run.stderr)") }
        #expect(!FileManager.default.fileExists(atPath: folder + "/run"))
    }

    @Test("A progressive JPEG within the pixel budget whose last scan repeats 300 times: refused within a second")
    func repeatedScansWithinBudget() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get()
        let input = folder + "/progressive-9984x9984-300-scans.jpg"
        try HostileImages.repeatedScanJPEG(width: 9984, height: 9984, repeats: 300).write(to: URL(fileURLWithPath: input))
        try HostileRun(label: "progressive JPEG 9984x9984, last scan 300 times", tool: samrun,
                       arguments: [model, input, "--point", "1,1", "--out", folder + "/run"],
                       mentions: [input, "9984x9984", "more than 100 scans"], output: folder + "/run", seconds: 1).check()
    }

    @Test("A 1x10000 image, which resizes to zero width, is refused naming its file (not <memory>)")
    func degenerateAspect() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get()
        let input = folder + "/thin-1x10000.png"
        try HostileImages.png(width: 1, height: 10000, rgb: true, rows: 10000).write(to: URL(fileURLWithPath: input))
        let run = try HostileRun(label: "1x10000 PNG", tool: samrun, arguments: [model, input, "--point", "0,5", "--out", folder + "/run"],
                                 mentions: [input + ": a 1x10000 image resizes to 0x"], output: folder + "/run", seconds: 2).check()
        #expect(!run.stderr.contains("<memory>"), "\(run.stderr)")
    }

    @Test("Hand-made files are what they claim: a small repeated-scan JPEG and a small PNG decode")
    func generatorsMakeValidImages() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get()
        let jpeg = folder + "/scans.jpg", png = folder + "/small.png"
        try HostileImages.repeatedScanJPEG(width: 64, height: 48, repeats: 20).write(to: URL(fileURLWithPath: jpeg))
        try HostileImages.png(width: 64, height: 48, rgb: true, rows: 48).write(to: URL(fileURLWithPath: png))
        for input in [jpeg, png] {
            let run = try samrun.run([model, input, "--point", "10,10", "--out", folder + "/out"])
            #expect(run.status == 0, "\(input): \(run.stderr)")
        }
        // Past the scan limit the same file is refused.
        try HostileImages.repeatedScanJPEG(width: 64, height: 48, repeats: 101).write(to: URL(fileURLWithPath: jpeg))
        let refused = try samrun.run([model, jpeg, "--point", "10,10", "--out", folder + "/refused"])
        #expect(refused.status == 2 && refused.stderr.contains("more than 100 scans"), "\(refused.stderr)")
    }

    @Test("--max-pixels: the demo photo (128x85 = 10880 pixels) passes at 10880 and is refused at 10879")
    func maxPixels() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get()
        let fits = try samrun.run([model, Hostile.photo, "--point", "10,10", "--max-pixels", "10880", "--out", folder + "/fits"])
        #expect(fits.status == 0, "\(fits.stderr)")
        let over = try samrun.run([model, Hostile.photo, "--point", "10,10", "--max-pixels", "10879", "--out", folder + "/over"])
        #expect(over.status == 2 && over.stderr.contains("128x85") && over.stderr.contains("10879"), "\(over.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/over"))
    }

    @Test("Valid variants decode (16-bit, palette, CMYK, gray+alpha, progressive); damaged ones are refused",
          arguments: [("gray16.png", 0), ("rgb16.png", 0), ("palette8.png", 0), ("palette1.png", 0), ("cmyk.jpg", 0),
                      ("gray_alpha8.png", 0), ("gray_alpha16.png", 0), ("progressive.jpg", 0), ("gray.jpg", 0),
                      ("truncated.png", 2), ("truncated.jpg", 2), ("bad_crc.png", 2), ("zero_width.png", 2),
                      ("huge.png", 2), ("empty.png", 2), ("not_an_image.png", 2)])
    func variants(name: String, expected: Int32) throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get()
        let run = try samrun.measured([model, Self.fixtures + "/" + name, "--point", "1,1", "--out", folder + "/run"])
        #expect(run.status == expected && !run.crashed, "\(name): status \(run.status)\n\(run.stderr)")
        #expect(run.seconds < 10)
    }

    @Test("A FIFO as the image, the mask input or the embeddings is refused at once, not waited on")
    func fifo() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get()
        let fifo = folder + "/pipe.npy"
        #expect(mkfifo(fifo, 0o600) == 0)
        let cases: [[String]] = [
            [model, fifo, "--point", "1,1"],
            [model, Hostile.photo, "--point", "1,1", "--mask-input", fifo],
            [model, Hostile.photo, "--point", "1,1", "--embeddings", fifo],
            [fifo, Hostile.photo, "--point", "1,1"],
        ]
        for arguments in cases {
            let run = try samrun.measured(arguments + ["--out", folder + "/run"], timeout: 10)
            #expect(!run.timedOut, "blocked on the FIFO: \(arguments)")
            #expect(run.status == 2 && run.stderr.contains("not a regular file"), "\(arguments): \(run.status) \(run.stderr)")
        }
    }
}
