import Foundation
import SAMEverything
import SAMEverythingFiles
import SAMFiles
import SAMFormats
import SAMImage
import SAMImageFiles
import SAMPipeline

/// `samrun MODEL --everything --images DIR_OR_LIST --out DIR [--shard I/N] [--coco FILE]`: the
/// automatic mask generator over a dataset (`ImageDataset`, `EverythingDataset`, `COCOInstances`).
/// Everything given is checked before the model loads or anything is written: the shard, the
/// generator's settings, every image (a regular PNG or JPEG file within the limits, distinct output
/// names), the output folder's names and the merge's file.
struct EverythingDatasetRun {
    let model: String
    let images: String
    let out: String
    let options: EverythingOptions
    let maxPixels: Int
    let skipChecksums: Bool

    func run() throws(RunFailure) {
        let shard = try options.shard.map { text throws(RunFailure) in try RunFailure.wrap { try DatasetShard(parsing: text) } } ?? .whole
        try RunFailure.wrap { try RegularFile.require(model, role: "MODEL") }
        let limits = ImageLimits(maxPixels: maxPixels)
        let dataset = try RunFailure.wrap { () throws -> ImageDataset in
            do { return try ImageDataset(images, limits: limits) } catch {
                let message = "\(error)"
                throw RunFailure(message.hasPrefix(images) ? "--images " + message : "--images \(images): " + message)
            }
        }
        let run = EverythingDataset(dataset: dataset, folder: out, shard: shard, otherInputs: [model])
        try RunFailure.wrap { try run.checkOutputs() }
        if let coco = options.coco { try checkMerge(coco, run) }

        let todo = run.pending()
        let shardSize = run.shardImages.count
        let part = shard == .whole ? "" : ", shard \(shard): \(shardSize)"
        report("\(Self.count(dataset.images.count, "image")) in \(images)\(part); \(shardSize - todo.count) already segmented, \(todo.count) to segment")
        if todo.isEmpty {
            try RunFailure.wrap { try run.prepareFolder() }
            print("\(out): every image of \(shard == .whole ? "the dataset" : "shard \(shard)") has its JSON")
        } else {
            let predictor = try RunFailure.wrap { try SegmentAnything(modelPath: model, verifyingChecksums: !skipChecksums) }
            let settings = try options.settings(for: AutomaticMaskGenerator.rule(for: predictor))
            let generator = try RunFailure.wrap { try AutomaticMaskGenerator(segmenter: predictor, settings: settings) }
            let summary = try RunFailure.wrap {
                try run.run(with: generator, limits: limits) { progress in
                    report("\(progress.done)/\(progress.total) \(TerminalText.escaped(progress.image.name)): \(progress.masks) masks in "
                           + String(format: "%.2f", progress.seconds) + " s"
                           + (progress.done < progress.total ? "; about \(DatasetProgress.duration(progress.secondsLeft)) left" : ""))
                }
            }
            print("wrote \(out): \(Self.count(summary.segmented, "image")) segmented (\(Self.count(summary.masks, "mask"))) in "
                  + String(format: "%.2f", summary.seconds) + " s; \(summary.skipped) already had their JSON")
        }
        if let coco = options.coco {
            let policy = OutputPolicy(existing: .replace, inputs: mergeInputs(run), option: "--coco")
            let counts = try RunFailure.wrap { try COCOInstances.write(run, to: coco, policy: policy) }
            print("wrote \(coco): \(Self.count(counts.images, "image")), \(Self.count(counts.annotations, "annotation"))")
        }
    }

    static func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)" + (number == 1 ? "" : "s") }

    private func report(_ line: String) {
        FileHandle.standardError.write(Data("samrun: \(line)\n".utf8))
    }

    /// The files a merge reads and must not replace: the model, the list file, the images, and the
    /// JSONs already there (the others are checked by name).
    private func mergeInputs(_ run: EverythingDataset) -> [String] {
        [model] + run.dataset.inputPaths + run.dataset.images.filter(run.hasJSON).map(run.jsonPath(for:))
    }

    /// The merge's file may be written where asked: its folder exists (or is --out, made by the run),
    /// nothing but a regular file stands there, and it is none of the inputs nor any image's JSON.
    private func checkMerge(_ coco: String, _ run: EverythingDataset) throws(RunFailure) {
        let target = URL(fileURLWithPath: coco).standardizedFileURL
        let parent = target.deletingLastPathComponent().path
        let outFolder = URL(fileURLWithPath: out).standardizedFileURL.path
        var isFolder: ObjCBool = false
        let parentExists = FileManager.default.fileExists(atPath: parent, isDirectory: &isFolder)
        guard (parentExists && isFolder.boolValue) || parent == outFolder else {
            throw RunFailure("--coco \(coco): the folder \(parent) does not exist (nothing was touched)")
        }
        let sameFolder = parent == outFolder
            || (parentExists && FileIdentity(path: parent) != nil && FileIdentity(path: parent) == FileIdentity(path: outFolder))
        let name = target.lastPathComponent.lowercased()
        if sameFolder, let image = run.dataset.images.first(where: { $0.outputName.lowercased() == name }) {
            throw RunFailure("--coco \(coco) is the JSON of the image \(image.name); write the merge under another name (nothing was touched)")
        }
        let inputs = mergeInputs(run)
        try RunFailure.wrap { try OutputRule.check(coco, OutputPolicy(existing: .replace, inputs: [], option: "--coco")) }
        if let identity = FileIdentity(path: coco), let input = inputs.first(where: { FileIdentity(path: $0) == identity }) {
            throw RunFailure("--coco \(coco) is the input \(input); an output never replaces one of the run's inputs (nothing was touched)")
        }
    }
}
