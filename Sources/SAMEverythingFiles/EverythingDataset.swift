import Foundation
import SAMEverything
import SAMFiles
import SAMImage
import SAMImageFiles
import SAMPipeline

/// Segment everything over an `ImageDataset`: each image of one shard gets `<stem>.json` in `folder`
/// (its annotations exactly as `masks.json` and upstream's `scripts/amg.py --convert-to-rle` hold them).
///
/// An image whose JSON exists is skipped, so a run that was stopped resumes where it was; every JSON
/// is written to a temporary and renamed into place (`AtomicFile`), so one that exists is whole.
/// Outputs follow `OutputRule`: a directory, link, FIFO or other non-regular file at a JSON's name is
/// refused, and no JSON is ever one of the run's inputs (an image, the list file, the model).
/// Shards of one dataset may run at the same time into the same folder: their JSONs are disjoint.
public struct EverythingDataset: Sendable {
    public let dataset: ImageDataset
    /// Where the JSONs go; made (with its parents) by `prepareFolder`.
    public let folder: String
    public let shard: DatasetShard
    /// Files the run reads besides the dataset's own (the model): no output may be one of them.
    public let otherInputs: [String]

    public init(dataset: ImageDataset, folder: String, shard: DatasetShard = .whole, otherInputs: [String] = []) {
        self.dataset = dataset
        self.folder = folder
        self.shard = shard
        self.otherInputs = otherInputs
    }

    public func jsonPath(for image: ImageDataset.Image) -> String {
        (folder.hasSuffix("/") ? folder : folder + "/") + image.outputName
    }

    /// This shard's images.
    public var shardImages: [ImageDataset.Image] { dataset.images(in: shard).map(\.image) }

    /// Whether the image's JSON is there (a regular file at its name).
    public func hasJSON(_ image: ImageDataset.Image) -> Bool {
        (try? OutputRule.entry(at: jsonPath(for: image))) == .regularFile
    }

    /// This shard's images that have no JSON yet, in dataset order.
    public func pending() -> [ImageDataset.Image] { shardImages.filter { !hasJSON($0) } }

    /// The images of the whole dataset (every shard) that have no JSON yet.
    public func missing() -> [ImageDataset.Image] { dataset.images.filter { !hasJSON($0) } }

    /// Checks, touching nothing, that every JSON of the dataset may be written or read where it goes:
    /// `folder` is absent or a folder (a link to one is followed), and at each JSON's name stands
    /// nothing, or a regular file that is none of the inputs.
    public func checkOutputs() throws(EverythingError) {
        var status = stat()
        guard stat(folder, &status) == 0 else {
            guard errno == ENOENT else { throw .dataset("--out \(folder): \(String(cString: strerror(errno)))") }
            return
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw .dataset("--out \(folder) is not a folder (nothing was touched)")
        }
        let inputs = Set((dataset.inputPaths + otherInputs).compactMap(FileIdentity.init(path:)))
        var problems: [String] = []
        for image in dataset.images {
            let path = jsonPath(for: image)
            do {
                switch try OutputRule.entry(at: path) {
                case .nothing: break
                case .other(let kind):
                    problems.append("\(path) is \(kind); an output may only replace a regular file")
                case .regularFile:
                    if let identity = FileIdentity(path: path), inputs.contains(identity) {
                        problems.append("\(path) is one of the run's inputs; an output never replaces one")
                    }
                }
            } catch {
                problems.append(error.message)
            }
        }
        if !problems.isEmpty {
            throw .dataset("--out \(folder): " + ImageDataset.listing(problems, what: "output name(s) refused (nothing was touched)"))
        }
    }

    /// Makes `folder` and its parents if absent. Several shards may do so at once: a folder another
    /// process made first is taken as made.
    public func prepareFolder() throws(EverythingError) {
        var prefix = folder.hasPrefix("/") ? "" : "."
        for part in folder.split(separator: "/") {
            prefix += "/" + part
            guard mkdir(prefix, 0o755) != 0 else { continue }
            let failure = errno
            var status = stat()
            guard stat(prefix, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
                let reason = failure == EEXIST ? "it is not a folder" : String(cString: strerror(failure))
                throw .dataset("--out \(folder): cannot create \(prefix): \(reason)")
            }
        }
    }

    /// Segments one image and writes its JSON; returns its annotations.
    @discardableResult
    public func segment(_ image: ImageDataset.Image, with generator: AutomaticMaskGenerator,
                        limits: ImageLimits = .default) throws(EverythingError) -> [MaskAnnotation] {
        let photo: RGBImage
        do { photo = try ImageIO.read(image.path, limits: limits) } catch { throw .image(error) }
        let annotations: [MaskAnnotation]
        do { annotations = try generator.generate(photo) } catch {
            switch error {
            case .image(let failure): throw .image(failure.attributed(to: image.path))
            case .pipeline(.image(let failure)): throw .image(failure.attributed(to: image.path))
            default: throw error
            }
        }
        let policy = OutputPolicy(existing: .replace, inputs: otherInputs + [image.path], option: "--out")
        do { try AtomicFile.write(Array(MaskAnnotation.jsonText(annotations).utf8), to: jsonPath(for: image), policy: policy) } catch {
            throw .dataset("\(error)")
        }
        return annotations
    }

    /// Segments every pending image of the shard in dataset order, telling `progress` after each.
    /// Stops at the first image that cannot be segmented (the JSONs written so far stay).
    @discardableResult
    public func run(with generator: AutomaticMaskGenerator, limits: ImageLimits = .default,
                    progress: ((DatasetProgress) -> Void)? = nil) throws(EverythingError) -> DatasetProgress.Summary {
        let total = shardImages.count
        let todo = pending()
        try prepareFolder()
        var summary = DatasetProgress.Summary(skipped: total - todo.count, segmented: 0, masks: 0, seconds: 0)
        for image in todo {
            let started = Date()
            let annotations = try segment(image, with: generator, limits: limits)
            let seconds = Date().timeIntervalSince(started)
            summary.segmented += 1
            summary.masks += annotations.count
            summary.seconds += seconds
            let left = todo.count - summary.segmented
            progress?(DatasetProgress(image: image, masks: annotations.count, seconds: seconds,
                                      done: summary.skipped + summary.segmented, total: total,
                                      secondsLeft: summary.seconds / Double(summary.segmented) * Double(left)))
        }
        return summary
    }
}

/// One image of a dataset run done.
public struct DatasetProgress: Sendable {
    public var image: ImageDataset.Image
    /// Masks kept on this image, and the seconds it took (reading, generating, writing).
    public var masks: Int
    public var seconds: Double
    /// The shard's images that have their JSON (skipped ones included), and all the shard's images.
    public var done: Int
    public var total: Int
    /// The mean time per image segmented so far in this run, times the images still to segment.
    public var secondsLeft: Double

    /// A run's totals.
    public struct Summary: Sendable, Equatable {
        /// Images whose JSON was already there, and images segmented.
        public var skipped: Int
        public var segmented: Int
        public var masks: Int
        public var seconds: Double
    }

    /// A duration for a person: `42 s`, `3 min 20 s`, `2 h 05 min`.
    public static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "unknown" }
        if seconds < 10 { return String(format: "%.1f s", seconds) }
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole) s" }
        if whole < 3600 { return "\(whole / 60) min \(whole % 60) s" }
        return "\(whole / 3600) h " + String(format: "%02d min", (whole % 3600) / 60)
    }
}
