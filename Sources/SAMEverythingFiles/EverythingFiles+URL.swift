import Foundation
import SAMEverything
import SAMFiles
import SAMImage

// Datasets, runs and COCO merges at file URLs, as their path forms take paths. A URL that is not a
// file URL (https://...) throws `EverythingError.dataset` naming it; nothing is fetched or written.

extension EverythingError {
    /// `url`'s path when it is a file URL; else the error naming the URL and what it was for.
    static func localPath(of url: URL, for what: String) throws(EverythingError) -> String {
        guard url.isFileURL else { throw .dataset("\(url.absoluteString): not a file URL: \(what) must be a local file or folder") }
        return url.path
    }
}

extension ImageDataset {
    /// A folder of images or a list file at a file URL; see `init(_:limits:)`.
    public init(contentsOf url: URL, limits: ImageLimits = .default) throws(EverythingError) {
        try self.init(EverythingError.localPath(of: url, for: "a dataset"), limits: limits)
    }
}

extension EverythingDataset {
    /// A run writing its JSONs into the folder at a file URL; see `init(dataset:folder:shard:otherInputs:)`.
    public init(dataset: ImageDataset, folder: URL, shard: DatasetShard = .whole, otherInputs: [URL] = []) throws(EverythingError) {
        var inputs: [String] = []
        for input in otherInputs { inputs.append(try EverythingError.localPath(of: input, for: "an input")) }
        self.init(dataset: dataset, folder: try EverythingError.localPath(of: folder, for: "the output folder"), shard: shard,
                  otherInputs: inputs)
    }
}

extension COCOInstances {
    /// Writes the COCO merge to a file URL; see `write(_:to:policy:)`.
    @discardableResult
    public static func write(_ run: EverythingDataset, to url: URL, policy: OutputPolicy = .replace) throws(EverythingError) -> Counts {
        try write(run, to: EverythingError.localPath(of: url, for: "the COCO file"), policy: policy)
    }
}
