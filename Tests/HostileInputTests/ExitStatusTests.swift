import Foundation
import SAMFiles
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing

/// README.md's exit-status table is what every CLI does: each tool on a usage error, a bad input and
/// a good input (and samverify on a mismatch) exits with the code the table gives that outcome.
@Suite("Exit statuses: README's table matches every CLI", .serialized)
struct ExitStatusTests {
    /// The table's rows: code -> outcome text, from the "## Exit status" section of README.md.
    static func table() throws -> [Int32: String] {
        let readme = try String(contentsOfFile: HostileCorpus.root + "/README.md", encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "\n## Exit status").dropFirst().first, "README has no Exit status section")
        var rows: [Int32: String] = [:]
        let lines = section.split(separator: "\n").prefix(while: { !$0.hasPrefix("## ") })
        for line in lines where line.hasPrefix("| ") {
            let cells: [String] = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            if cells.count > 1, let code = Int32(cells[0]) { rows[code] = cells[1] }
        }
        return rows
    }

    static func code(_ rows: [Int32: String], _ outcome: String) throws -> Int32 {
        try #require(rows.first { $0.value.lowercased().hasPrefix(outcome) }?.key, "no row for \(outcome) in \(rows)")
    }

    @Test("Usage error, bad input, good input (and a mismatch) for samconvert, samrun, samverify, saminspect")
    func everyTool() throws {
        let rows = try Self.table()
        #expect(rows.count == 3, "\(rows)")
        let success = try Self.code(rows, "success"), mismatch = try Self.code(rows, "verification mismatch")
        let bad = try Self.code(rows, "bad input or usage")
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get()
        let tiny = HostileCorpus.tiny
        let runs: [(CommandLineTool, [String], Int32, String)] = [
            (samconvert, ["--bogus"], bad, "usage: unknown option"),
            (samconvert, [tiny + "/mobile_sam.h5", "--max-points", "99999999999999999999999", "--out", folder + "/x.samw"], bad, "usage: overflowing number"),
            (samconvert, [folder + "/missing.h5", "--out", folder + "/x.samw"], bad, "bad input: missing file"),
            (samconvert, [tiny + "/mobile_sam.h5", "--config", tiny + "/config.json", "--out", folder + "/good.samw"], success, "good"),
            (samrun, [model, Hostile.photo, "--bogus"], bad, "usage: unknown option"),
            (samrun, [model, Hostile.photo, "--point"], bad, "usage: missing value"),
            (samrun, [model, Hostile.photo, "--point", "1,1", "--profile-depth", "99999999999999999999999"], bad, "usage: overflow"),
            (samrun, [model, Hostile.photo, "--point", "-5,10", "--out", folder + "/neg"], bad, "bad input: outside the image"),
            (samrun, [model, Hostile.photo, "--point", "1,1", "--box", "0,0,5,5", "--box", "0,0,6,6", "--out", folder + "/b"], bad, "two boxes"),
            (samrun, [model, Hostile.photo, "--point", "10,10", "--out", folder + "/run"], success, "good"),
            (samverify, [model, "--bogus"], bad, "usage: unknown option"),
            (samverify, [model, "--references", folder + "/missing"], bad, "bad input: missing set"),
            (samverify, [model, "--references", tiny, "--quiet", "--case", "point1"], success, "good"),
            (saminspect, ["--bogus"], bad, "usage: unknown option"),
            (saminspect, [folder + "/missing.npy"], bad, "bad input: missing file"),
            (saminspect, [tiny + "/references/image_embeddings.npy"], success, "good"),
        ]
        for (tool, arguments, expected, label) in runs {
            let run = try tool.run(arguments)
            #expect(run.status == expected && !run.crashed, "\(tool.name) \(label): exit \(run.status), table says \(expected)\n\(run.stderr)")
            if run.status != 0 { #expect(!run.stderr.isEmpty, "\(tool.name) \(label): no message") }
        }
        // Negative coordinates in both forms people type reach the prompt check, which names the image's size.
        for form in [["--point", "-5,10"], ["--point=-5,10"], ["--point", "-0,3", "--point", "-1,3"]] {
            let run = try samrun.run([model, Hostile.photo] + form + ["--out", folder + "/neg"])
            #expect(run.status == bad && run.stderr.contains("outside the 128x85 image"), "\(form): \(run.stderr)")
        }
        // A mismatch: the tiny model with one decoder weight moved far.
        let mismatched = try samverify.run([try perturbedModel(in: folder), "--references", tiny, "--quiet", "--case", "point1"])
        #expect(mismatched.status == mismatch, "samverify mismatch: exit \(mismatched.status)\n\(mismatched.stderr)")
    }

    @Test("40,000 --point options are refused at once, before the argument parser")
    func manyPoints() throws {
        let model = try Hostile.goodModel.get()
        let started = Date()
        let run = try samrun.run([model, Hostile.photo] + Array(repeating: ["--point", "1,1"], count: 40_000).flatMap { $0 })
        #expect(run.status == 2 && run.stderr.contains("40000 --point options"), "\(run.stderr.prefix(300))")
        #expect(Date().timeIntervalSince(started) < 5)
    }

    /// The tiny model with its IoU head's bias moved by 10: every decoder case's IoU fails.
    func perturbedModel(in folder: String) throws -> String {
        let path = folder + "/perturbed.samw"
        let run = try samconvert.run([HostileCorpus.tiny + "/mobile_sam.h5", "--config", HostileCorpus.tiny + "/config.json",
                                      "--out", path])
        #expect(run.status == 0)
        let file = try SAMWFile(path: path)
        let name = "mask_decoder.iou_prediction_head.layers.2.bias"
        // Written again through the .samw writer, so the table's CRC-32 matches the edited weight
        // (a load checks it: an edited byte alone is a damaged file, exit 2, not a mismatch).
        let tensors = try file.names.map { entry in
            let tensor = try file.tensor(named: entry)
            guard entry == name else { return (name: entry, tensor: tensor) }
            var values = tensor.floats()
            values[0] += 10
            return (name: entry, tensor: Tensor(shape: tensor.shape, floats: values))
        }
        let edited = folder + "/perturbed-edited.samw"
        try SAMWWriter.write(tensors: tensors, metadata: file.metadata, to: edited)
        return edited
    }
}
