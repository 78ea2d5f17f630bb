import Foundation
import SAMEverything
import SAMFiles
import SAMFormats
import SAMImage
import SAMImageFiles
import SAMModel
import SAMPipeline

/// `samrun MODEL IMAGE --everything --out DIR`: the automatic mask generator on one photo. Writes
/// `masks.json` (the annotations as upstream's `scripts/amg.py --convert-to-rle` writes them, or with
/// uncompressed RLEs), `overlay.png`, with `--mask-pngs` `everything_NNNN.png` per mask, and with
/// `--output-mode binary_mask` `<i>.png` per mask and `metadata.csv` (amg.py's folder without RLE),
/// all put in place together.
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
        let settings = try options.settings(for: AutomaticMaskGenerator.rule(for: predictor))
        let generator = try RunFailure.wrap { try AutomaticMaskGenerator(segmenter: predictor, settings: settings) }
        let policy = OutputPolicy(existing: .replace, inputs: [model, image], option: "--out")
        // Numbered PNGs binary_mask may write over are checked too (a folder or link there is refused now).
        _ = try RunFailure.wrap { try StagedFolder.check(folder: out, ownedNames: ownedNames() + numberedPNGs(), policy: policy) }
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
            let format: MaskAnnotation.SegmentationFormat = options.mode == .uncompressedRLE ? .uncompressedRLE : .cocoRLE
            try AtomicFile.write(Array(MaskAnnotation.jsonText(annotations, format: format).utf8), to: staged.path("masks.json"))
            try ImageIO.writePNG(EverythingOverlay.render(photo, annotations), to: staged.path("overlay.png"))
            if options.maskPNGs {
                for (index, annotation) in annotations.enumerated() {
                    let name = Self.maskName(index)
                    try ImageIO.writeGrayPNG(pixels: annotation.segmentation.grayPixels(), width: photo.width, height: photo.height,
                                             to: staged.path(name))
                    names.append(name)
                }
            }
            if options.mode == .binaryMask {
                // ref: scripts/amg.py write_masks_to_folder — cv2.imwrite(f"{i}.png", mask * 255); metadata.csv
                for (index, annotation) in annotations.enumerated() {
                    try ImageIO.writeGrayPNG(pixels: annotation.segmentation.grayPixels(), width: photo.width, height: photo.height,
                                             to: staged.path("\(index).png"))
                    names.append("\(index).png")
                }
                try AtomicFile.write(Array(MaskAnnotation.metadataCSV(annotations).utf8), to: staged.path("metadata.csv"))
                names.append("metadata.csv")
            }
        }
        try RunFailure.wrap { try staged.publish(names) }
        print("wrote \(out): \(annotations.count) masks from \(generator.promptCount(for: photo)) prompts in "
              + String(format: "%.2f", seconds) + " s")
    }

    static func maskName(_ index: Int) -> String { String(format: "everything_%04d.png", index) }

    /// The owned names, with every `everything_NNNN.png` an earlier run left in the folder and the
    /// `<i>.png` an earlier `metadata.csv` lists (taken away when this run writes fewer). A numbered
    /// PNG no metadata.csv lists is not this tool's: only one this run writes replaces it.
    func ownedNames() -> [String] {
        let existing = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
        let earlierMasks = existing.filter { $0.hasPrefix("everything_") && $0.hasSuffix(".png") && !$0.contains("/") }
        var names = Self.ownedNames + earlierMasks.sorted() + ["metadata.csv"]
        if options.mode == .binaryMask || existing.contains("metadata.csv") {
            let listed = Set(Self.listedMaskNames(csvAt: out + "/metadata.csv"))
            names += existing.filter { listed.contains($0) }.sorted()
        }
        return names
    }

    /// With `--output-mode binary_mask`, every `<i>.png` in the folder (any this run may write over).
    func numberedPNGs() -> [String] {
        guard options.mode == .binaryMask else { return [] }
        let existing = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
        return existing.filter { $0.hasSuffix(".png") && !$0.dropLast(4).isEmpty && $0.dropLast(4).allSatisfy { ("0"..."9").contains($0) } }.sorted()
    }

    /// The `<id>.png` names an earlier run's `metadata.csv` lists (none when it is absent or unreadable).
    static func listedMaskNames(csvAt path: String) -> [String] {
        guard let data = try? ConfigFile.contents(of: path, limit: 64 << 20, what: "a metadata.csv"),
              let text = String(data: data, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            line.split(separator: ",", maxSplits: 1).first.flatMap { Int($0) }.map { "\($0).png" }
        }
    }
}
