import Foundation
import SAMEverything
import SAMFormats
import SAMImage
import SAMPipeline

/// `samrun MODEL IMAGE --everything --out DIR`: the automatic mask generator on one photo. Writes
/// `masks.json` (the annotations as upstream's `scripts/amg.py --convert-to-rle` writes them),
/// `overlay.png` and, with `--mask-pngs`, `everything_NNNN.png` per mask, all put in place together.
struct EverythingRun {
    /// Every name this mode writes, and the single-prompt mode's (a folder never mixes the two).
    static let ownedNames = ["masks.json", "overlay.png"] + RunOutputs.ownedNames

    let model: String
    let image: String
    let out: String
    let options: EverythingOptions
    let maxPixels: Int
    let skipChecksums: Bool

    func run() throws(RunFailure) {
        let predictor = try RunFailure.wrap { try SegmentAnything(modelPath: model, verifyingChecksums: !skipChecksums) }
        let settings = options.settings(for: AutomaticMaskGenerator.rule(for: predictor))
        let generator = try RunFailure.wrap { try AutomaticMaskGenerator(segmenter: predictor, settings: settings) }
        let policy = OutputPolicy(existing: .replace, inputs: [model, image], option: "--out")
        _ = try RunFailure.wrap { try StagedFolder.check(folder: out, ownedNames: ownedNames(), policy: policy) }
        let photo = try RunFailure.wrap { try ImageIO.read(image, limits: ImageLimits(maxPixels: maxPixels)) }

        let started = Date()
        var lastReport = Date.distantPast
        let annotations = try RunFailure.wrap(image: image) {
            try generator.generate(photo) { done, total in
                guard Date().timeIntervalSince(lastReport) > 1 || done == total else { return }
                lastReport = Date()
                FileHandle.standardError.write(Data("samrun: \(done)/\(total) prompts\n".utf8))
            }
        }
        let seconds = Date().timeIntervalSince(started)

        let staged = try RunFailure.wrap { try StagedFolder(folder: out, ownedNames: ownedNames(), policy: policy) }
        var names = ["masks.json", "overlay.png"]
        try RunFailure.wrap {
            try AtomicFile.write(Array(MaskAnnotation.jsonText(annotations).utf8), to: staged.path("masks.json"))
            try ImageIO.writePNG(EverythingOverlay.render(photo, annotations), to: staged.path("overlay.png"))
            if options.maskPNGs {
                for (index, annotation) in annotations.enumerated() {
                    let name = Self.maskName(index)
                    try ImageIO.writeGrayPNG(pixels: annotation.segmentation.grayPixels(), width: photo.width, height: photo.height,
                                             to: staged.path(name))
                    names.append(name)
                }
            }
        }
        try RunFailure.wrap { try staged.publish(names) }
        print("wrote \(out): \(annotations.count) masks from \(generator.promptCount(for: photo)) prompts in "
              + String(format: "%.2f", seconds) + " s")
    }

    static func maskName(_ index: Int) -> String { String(format: "everything_%04d.png", index) }

    /// The owned names, with every `everything_NNNN.png` an earlier run left in the folder (taken away
    /// when this run writes fewer).
    func ownedNames() -> [String] {
        let existing = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
        let earlierMasks = existing.filter { $0.hasPrefix("everything_") && $0.hasSuffix(".png") && !$0.contains("/") }
        return Self.ownedNames + earlierMasks.sorted()
    }
}
