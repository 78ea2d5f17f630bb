import Foundation
import SAMImage
import SAMImageFiles
import SAMTestSupport
import Testing
@testable import SAMVerify

/// `--report DIR`: every picture index.html links exists and decodes, and a failing case's pictures
/// show where the masks differ.
@Suite("Verify: picture report")
struct PictureReportTests {
    @Test("index.html links every PNG, each loads, and a failing case's difference panel shows the changed pixels")
    func reportOfAFailingModel() throws {
        let folder = try temporaryFolder("pictures")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.perturbed(
            try ModelUnderTest.tiny(in: folder),
            tensor: "mask_decoder.transformer.layers.1.cross_attn_image_to_token.v_proj.weight", delta: 0.5,
            to: folder + "/mutated.samw")
        let references = try ReferenceSet.open(TestPaths.tinyReferences)
        let out = folder + "/report"
        let pictures = try PictureReport(folder: out, references: references, cases: references.caseNames, inputs: [model])
        let report = try Verifier.verify(modelPath: model, references: references, artifacts: pictures.record)
        try pictures.finish(report)
        let point1 = try #require(report.cases.first { $0.name == "point1" })
        #expect(point1.status == .fail)

        let html = try String(contentsOfFile: out + "/index.html", encoding: .utf8)
        let links = Self.links(in: html)
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasSuffix(".png") })
        #expect(Set(links) == files, "every PNG is linked and every link is a PNG of the folder")
        // Prompt, masks and error for each of the 8 decoder cases, the encoder's and preprocessing's error maps.
        #expect(files.count == 8 * 3 + 1 + 1)
        for file in files {
            let image = try ImageIO.read(out + "/" + file)
            #expect(image.width >= 128 && image.height >= 85, "\(file): \(image.width)x\(image.height)")
        }
        #expect(html.contains("<h2>Cases that did not pass</h2>") && html.contains(##"<a href="#case-1">point1</a>"##))

        // The masks picture: reference | native | difference, each panel the canvas's width, 8 pixels apart.
        let masks = try ImageIO.read(out + "/" + PictureReport.fileName(index: 1, caseName: "point1", suffix: "masks"))
        let canvas = PictureCanvas(original: ImageSize(height: 85, width: 128))
        #expect(masks.width >= 3 * canvas.width + 16 && masks.height == canvas.height)
        var changed = 0
        for y in 0..<canvas.height {
            for x in (2 * (canvas.width + 8))..<(3 * canvas.width + 16) {
                let pixel = (masks[x, y, 0], masks[x, y, 1], masks[x, y, 2])
                if pixel == (255, 40, 40) || pixel == (40, 255, 40) { changed += 1 }
            }
        }
        let task = try #require(point1.task?.prompts.first)
        let shown = task.masks[task.referenceBest]
        #expect(shown.iou < 1 && changed > 0, "IoU \(shown.iou), \(changed) differing pixels drawn")
    }

    @Test("samverify --report writes the folder; a file standing at its name is refused and kept")
    func commandLine() throws {
        let folder = try temporaryFolder("pictures-cli")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let run = try samverifyTool.run([model, "--references", TestPaths.tinyReferences,
                                         "--report", folder + "/pictures", "--case", "point1", "--quiet"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Set(Self.links(in: try String(contentsOfFile: folder + "/pictures/index.html", encoding: .utf8))).count == 3)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: folder + "/taken"))
        let refused = try samverifyTool.run([model, "--references", TestPaths.tinyReferences, "--report", folder + "/taken", "--quiet"])
        #expect(refused.status == 2 && refused.stderr.contains("not a folder"))
        #expect(try String(contentsOfFile: folder + "/taken", encoding: .utf8) == "keep")
    }

    /// Every `href` and `src` target of `html` that is not an anchor.
    static func links(in html: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: ##"(?:href|src)="([^"#][^"]*)""##)
        return pattern.matches(in: html, range: NSRange(html.startIndex..., in: html)).compactMap { match in
            Range(match.range(at: 1), in: html).map { String(html[$0]) }
        }
    }
}
