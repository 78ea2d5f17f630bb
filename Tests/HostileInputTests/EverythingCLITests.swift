import Foundation
import SAMEverything
import SAMImage
import SAMImageFiles
import SAMTestSupport
import Testing

/// `samrun --everything` on one photo: what it writes, and every bad option refused before any work
/// (exit 2 naming the option, within a second, nothing written).
@Suite("samrun --everything: outputs and bad options", .serialized)
struct EverythingCLITests {
    static let small = ["--points-per-side", "4", "--pred-iou-thresh", "0.1", "--stability-score-thresh", "0.05",
                        "--stability-score-offset", "0.05", "--box-nms-thresh", "1.0"]

    @Test("masks.json holds upstream's annotation fields, overlay.png is written, --mask-pngs one PNG a mask; fewer masks later take the extra PNGs away")
    func outputs() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get(), out = folder + "/out"
        let run = try samrun.run([model, Hostile.photo, "--everything", "--mask-pngs", "--out", out] + Self.small)
        #expect(run.status == 0, "\(run.stderr)")
        let annotations = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/masks.json"))) as? [[String: Any]])
        #expect(annotations.count >= 5, "\(annotations.count) masks")
        let first = try #require(annotations.first)
        #expect(Set(first.keys) == ["segmentation", "area", "bbox", "predicted_iou", "point_coords", "stability_score", "crop_box"])
        #expect((first["segmentation"] as? [String: Any])?["size"] as? [Int] == [85, 128])
        #expect(FileManager.default.fileExists(atPath: out + "/overlay.png"))
        let pngs = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasPrefix("everything_") }
        #expect(pngs.count == annotations.count)

        let fewer = try samrun.run([model, Hostile.photo, "--everything", "--mask-pngs", "--out", out, "--points-per-side", "1",
                                    "--pred-iou-thresh", "0", "--stability-score-thresh", "0"])
        #expect(fewer.status == 0, "\(fewer.stderr)")
        let kept = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/masks.json"))) as? [Any]
        let left = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasPrefix("everything_") }
        #expect(left.count == kept?.count && left.count < pngs.count, "\(left.count) PNGs for \(kept?.count ?? -1) masks")
    }

    @Test("--output-mode uncompressed_rle holds the COCO masks' run lengths, binary_mask writes amg.py's <i>.png and metadata.csv; --point-grids runs the grid it lists")
    func outputModesAndGrids() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get()
        func masks(_ name: String, _ extra: [String], options: [String] = Self.small) throws -> [[String: Any]] {
            let run = try samrun.run([model, Hostile.photo, "--everything", "--out", folder + "/" + name] + options + extra)
            #expect(run.status == 0, "\(run.stderr)")
            return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/\(name)/masks.json"))) as? [[String: Any]])
        }
        let coco = try masks("coco", [])
        #expect(coco.count >= 5)
        let uncompressed = try masks("uncompressed", ["--output-mode", "uncompressed_rle"])
        #expect(uncompressed.count == coco.count)
        for (a, b) in zip(coco, uncompressed) {
            let string = try #require((a["segmentation"] as? [String: Any])?["counts"] as? String)
            let runs = try #require((b["segmentation"] as? [String: Any])?["counts"] as? [Int])
            #expect(try COCORLE.decodeCounts(string) == runs && runs.reduce(0, +) == 85 * 128)
            #expect(a["area"] as? Int == b["area"] as? Int)
        }

        // A numbered PNG no metadata.csv lists is the user's: left alone, never taken away.
        let binary = folder + "/binary"
        try FileManager.default.createDirectory(atPath: binary, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: binary + "/500.png"))
        _ = try masks("binary", ["--output-mode", "binary_mask"])
        let csv = try String(contentsOfFile: binary + "/metadata.csv", encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(csv.first == "id,area,bbox_x0,bbox_y0,bbox_w,bbox_h,point_input_x,point_input_y,predicted_iou,stability_score,crop_box_x0,crop_box_y0,crop_box_w,crop_box_h")
        #expect(csv.count == coco.count + 1)
        for (index, annotation) in coco.enumerated() {
            let fields = csv[index + 1].split(separator: ",")
            #expect(fields.count == 14 && fields[0] == "\(index)" && Int(fields[1]) == annotation["area"] as? Int)
            let png = try ImageIO.read(binary + "/\(index).png")
            #expect(png.pixels.enumerated().filter { $0.offset % 3 == 0 && $0.element == 255 }.count == annotation["area"] as? Int)
        }
        let fewer = try masks("binary", ["--output-mode", "binary_mask", "--points-per-side", "1", "--pred-iou-thresh", "0",
                                         "--stability-score-thresh", "0"], options: [])
        let numbered = try FileManager.default.contentsOfDirectory(atPath: binary).filter { $0.first?.isNumber == true }.sorted()
        #expect(Set(numbered) == Set((0..<fewer.count).map { "\($0).png" } + ["500.png"]), "\(numbered)")
        #expect(try String(contentsOfFile: binary + "/500.png", encoding: .utf8) == "mine")

        // The grid --points-per-side 4 makes, listed: the same masks, byte for byte.
        let grid = (0..<4).flatMap { y in (0..<4).map { x in "[\((Double(x) + 0.5) / 4), \((Double(y) + 0.5) / 4)]" } }
        try Data("[[\(grid.joined(separator: ", "))]]".utf8).write(to: URL(fileURLWithPath: folder + "/grid.json"))
        _ = try masks("grid", ["--point-grids", folder + "/grid.json"], options: Array(Self.small.dropFirst(2)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/grid/masks.json")) == Data(contentsOf: URL(fileURLWithPath: folder + "/coco/masks.json")))
        let both = try samrun.run([model, Hostile.photo, "--everything", "--out", folder + "/both", "--point-grids", folder + "/grid.json"] + Self.small)
        #expect(both.status == 2 && both.stderr.contains("exclude each other") && !FileManager.default.fileExists(atPath: folder + "/both"))
    }

    @Test("bad options: exit 2 naming the option, within a second, nothing written",
          arguments: [
            (["--points-per-side", "0"], "--points-per-side 0"),
            (["--points-per-side", "100000"], "--points-per-side 100000"),
            (["--pred-iou-thresh", "1.5"], "--pred-iou-thresh 1.5"),
            (["--pred-iou-thresh", "nan"], "--pred-iou-thresh nan"),
            (["--stability-score-thresh", "-0.1"], "--stability-score-thresh -0.1"),
            (["--box-nms-thresh", "inf"], "--box-nms-thresh inf"),
            (["--crop-n-layers", "9"], "--crop-n-layers 9"),
            (["--points-per-batch", "0"], "--points-per-batch 0"),
            (["--crop-overlap-ratio", "1"], "--crop-overlap-ratio 1"),
            (["--use-m2m"], "--use-m2m"),
            (["--point", "10,10"], "--point"),
            (["--output-mode", "binary"], "--output-mode"),
            (["--point-grids", "/nonexistent/grid.json"], "/nonexistent/grid.json"),
          ])
    func badOptions(arguments: [String], says: String) throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get(), out = folder + "/out"
        try HostileRun(label: "--everything " + arguments.joined(separator: " "), tool: samrun,
                       arguments: [model, Hostile.photo, "--everything", "--out", out] + arguments,
                       mentions: [says], output: out, seconds: 1).check()
    }

    @Test("generator options without --everything are refused")
    func optionsNeedEverything() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get(), out = folder + "/out"
        try HostileRun(label: "--points-per-side without --everything", tool: samrun,
                       arguments: [model, Hostile.photo, "--point", "10,10", "--points-per-side", "8", "--out", out],
                       mentions: ["need --everything"], output: out, seconds: 1).check()
    }
}

/// `samverify` on a segment-everything set: pass on the committed tiny set; a set whose upstream masks
/// were edited fails (exit 1) listing the unmatched masks; options of tensor sets are refused.
@Suite("samverify on segment-everything sets", .serialized)
struct EverythingVerifyCLITests {
    static let set = HostileCorpus.root + "/reference_outputs/tiny_amg"

    /// The tiny set copied to `folder`, its weights path made absolute and `edit` applied to its masks.
    static func editedCopy(in folder: String, _ edit: (inout [[String: Any]]) -> Void) throws -> String {
        let copy = folder + "/set"
        try FileManager.default.copyItem(atPath: set, toPath: copy)
        var manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: copy + "/manifest.json"))) as! [String: Any]
        manifest["weights"] = HostileCorpus.root + "/reference_outputs/tiny/mobile_sam.h5"
        try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: copy + "/manifest.json"))
        let masksPath = copy + "/masks/photo.json"
        var masks = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: masksPath))) as! [[String: Any]]
        edit(&masks)
        try JSONSerialization.data(withJSONObject: masks).write(to: URL(fileURLWithPath: masksPath))
        return copy
    }

    @Test("the committed tiny set passes; with three upstream masks removed it fails, naming them in JSON and JUnit, drawn in the report")
    func passAndFail() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get()
        let pass = try samverify.run([model, "--references", Self.set, "--json", folder + "/pass.json", "--quiet"])
        #expect(pass.status == 0 && pass.stdout.contains("PASS (exit 0)"), "\(pass.stdout)\(pass.stderr)")

        let edited = try Self.editedCopy(in: folder) { masks in masks.removeSubrange(2..<5) }
        let fail = try samverify.run([model, "--references", edited, "--json", folder + "/fail.json", "--junit", folder + "/fail.xml",
                                      "--report", folder + "/report", "--quiet"])
        #expect(fail.status == 1 && fail.stdout.contains("FAIL (exit 1)"), "\(fail.stdout)\(fail.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/fail.json"))) as? [String: Any]
        let image = (report?["images"] as? [[String: Any]])?.first
        #expect(report?["status"] as? String == "fail")
        #expect((image?["unmatched_native"] as? [Int])?.count == 3 && (image?["unmatched_reference"] as? [Int])?.isEmpty == true,
                "\(String(describing: image))")
        #expect(try String(contentsOfFile: folder + "/fail.xml", encoding: .utf8).contains("<failure"))
        #expect(FileManager.default.fileExists(atPath: folder + "/report/index.html")
                && FileManager.default.fileExists(atPath: folder + "/report/image_000.png"))
    }

    @Test("a tensor set's options are refused on a segment-everything set")
    func notApplicable() throws {
        let model = try Hostile.goodModel.get()
        let run = try samverify.run([model, "--references", Self.set, "--atol", "1e-3", "--quiet"])
        #expect(run.status == 2 && run.stderr.contains("--atol"), "\(run.stderr)")
    }
}
