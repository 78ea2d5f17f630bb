import Foundation
import SAMTestSupport
import Testing

/// Names from files never reach the terminal raw (an escape sequence in a tensor name would clear,
/// recolour or retitle it; a bidi override would show it reversed), and every CLI keeps the reader's
/// own error kind (`unsafePath`, `corrupt` ...), not a blanket `unreadable`.
@Suite("Hostile names and error kinds: escaped output, kinds kept", .serialized)
struct TerminalEscapeTests {
    static let evil = "evil\u{1B}]0;pwned\u{07}\u{1B}[2J\u{202E}gpj.weight"

    static func expectNoRawControls(_ text: String, _ label: String) {
        let raw = text.unicodeScalars.filter { ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7F || $0 == "\u{202E}" }
        #expect(raw.isEmpty, "\(label) printed raw control characters: \(raw.map { String($0.value, radix: 16) })")
    }

    @Test("an ONNX initializer and an HDF5 dataset named with escape sequences: saminspect and samconvert print them escaped")
    func escapedNames() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let onnx = folder + "/evil.onnx"
        try HostileONNX.model(HostileONNX.graph(initializers: [HostileONNX.tensor(Self.evil, dims: [4], raw: HostileONNX.floats([1, 2, 3, 4]))]))
            .write(to: URL(fileURLWithPath: onnx))
        let h5 = folder + "/evil.h5"
        let builder = try HDF5Builder(path: h5)
        try builder.dataset("/" + Self.evil, shape: [4], values: [1, 2, 3, 4])
        builder.close()
        for input in [onnx, h5] {
            let listed = try saminspect.run(["--stats", input])
            Self.expectNoRawControls(listed.stdout + listed.stderr, "saminspect \(input)")
            #expect(listed.stdout.contains("evil\\x1b]0;pwned\\x07\\x1b[2J\\u{202e}gpj.weight"), "\(listed.stdout)")
            let converted = try samconvert.run([input, "--out", folder + "/out.samw"])
            #expect(converted.status == 2)
            Self.expectNoRawControls(converted.stdout + converted.stderr, "samconvert \(input)")
            #expect(converted.stderr.contains("\\x1b"), "\(converted.stderr)")
        }
    }

    @Test("reader kinds reach the message: unsafePath, corrupt, limitExceeded, not a blanket unreadable")
    func kindsKept() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let fixtures = HostileCorpus.root + "/Tests/SAMFormatsTests/Fixtures"
        // A weight the import maps, its bytes outside the model's folder.
        let escaping = try write(HostileONNX.model(HostileONNX.graph(initializers: [
            HostileONNX.tensor("mask_decoder.iou_token.weight", dims: [4], external: ("../../etc/hostname", 0, 16)),
        ])), folder + "/escaping.onnx")
        for fixture in ["ext_dotdot.onnx", "ext_absolute.onnx"] {
            let run = try saminspect.run(["--stats", fixtures + "/" + fixture])
            #expect(run.status == 2 && run.stderr.contains("[unsafePath]"), "saminspect \(fixture): \(run.stderr)")
        }
        let runs: [(String, [String], String)] = [
            ("ONNX weight whose external data climbs out", [escaping, "--out", folder + "/o.samw"], "[unsafePath]"),
            ("random bytes as HDF5", [fixtures + "/hdf5_random.h5", "--out", folder + "/o.samw"], "[corrupt]"),
            ("ONNX nested 20,000 deep", [try write(HostileONNX.nestedIfGraphs(depth: 20_000), folder + "/deep.onnx"), "--out", folder + "/o.samw"],
             "[limitExceeded]"),
        ]
        for (label, arguments, kind) in runs {
            let run = try samconvert.run(arguments)
            #expect(run.status == 2 && run.stderr.contains(kind) && !run.stderr.contains("[unreadable]"), "\(label): \(run.stderr)")
        }
    }

    func write(_ bytes: Data, _ path: String) throws -> String {
        try bytes.write(to: URL(fileURLWithPath: path))
        return path
    }
}
