import Foundation
import SAMEverything
import SAMFiles

/// A dataset's per-image JSONs merged into one COCO instances file:
///
/// - `images`: `id` (image i of the sorted dataset is i + 1), `file_name` (the name as listed:
///   a list file's line, or the file name in the folder), `width`, `height` (from the image's header);
/// - `annotations`: numbered from 1 in image order, then in each JSON's order: `id`, `image_id`,
///   `category_id` 1, `segmentation` (the COCO RLE as the JSON holds it), `area`, `bbox` (XYWH),
///   `iscrowd` 0, and the generator's `predicted_iou`, `stability_score`, `point_coords`, `crop_box`;
/// - `categories`: `[{"id": 1, "name": "object"}]`.
///
/// The text depends only on the dataset and the JSONs' contents, never on which process or shard
/// wrote them or in what order: shards merged afterwards give the file one process gives, byte for
/// byte. One image and its annotations a line; numbers as Python's `json` writes them.
public enum COCOInstances {
    /// How many images and annotations a merge wrote.
    public struct Counts: Sendable, Equatable {
        public var images: Int
        public var annotations: Int
    }

    /// Writes the merge of `run`'s JSONs (every image of the dataset, whatever the run's shard) to
    /// `path` atomically under `policy`, streaming one image's annotations at a time. Every image
    /// must have its JSON; the error counts and names the ones missing.
    @discardableResult
    public static func write(_ run: EverythingDataset, to path: String, policy: OutputPolicy = .replace) throws(EverythingError) -> Counts {
        try requireComplete(run)
        let writer: AtomicFileWriter
        do { writer = try AtomicFileWriter(path: path, policy: policy) } catch { throw .dataset("\(error)") }
        let counts = try merge(run) { text throws(EverythingError) in
            do { try writer.write(Array(text.utf8)) } catch { throw .dataset("\(error)") }
        }
        do { try writer.commit() } catch { throw .dataset("\(error)") }
        return counts
    }

    /// The merge as text (for a dataset small enough to hold it in memory).
    public static func text(_ run: EverythingDataset) throws(EverythingError) -> String {
        try requireComplete(run)
        var text = ""
        try merge(run) { text += $0 }
        return text
    }

    /// Throws when an image of the dataset has no JSON, counting them and naming the first few.
    public static func requireComplete(_ run: EverythingDataset) throws(EverythingError) {
        let missing = run.missing()
        guard !missing.isEmpty else { return }
        let names = missing.prefix(ImageDataset.problemsShown).map(\.outputName).joined(separator: ", ")
        let more = missing.count > ImageDataset.problemsShown ? ", ..." : ""
        throw .dataset("--coco: \(missing.count) of \(run.dataset.images.count) images have no JSON in \(run.folder) yet "
                       + "(\(names)\(more)); run the shards that segment them, then merge again")
    }

    /// Emits the merged file in pieces, reading one JSON at a time.
    @discardableResult
    static func merge(_ run: EverythingDataset, emit: (String) throws(EverythingError) -> Void) throws(EverythingError) -> Counts {
        let images = run.dataset.images
        try emit("{\"images\": [\n")
        for (index, image) in images.enumerated() {
            let separator = index + 1 < images.count ? ",\n" : "\n"
            try emit("  {\"id\": \(index + 1), \"file_name\": \(JSONText.quoted(image.name)), \"width\": \(image.header.width), "
                     + "\"height\": \(image.header.height)}" + separator)
        }
        try emit("], \"annotations\": [")
        var next = 1
        for (index, image) in images.enumerated() {
            let path = run.jsonPath(for: image)
            let annotations = try read(path)
            for (position, annotation) in annotations.enumerated() {
                guard annotation.segmentation.size == [image.header.height, image.header.width] else {
                    throw .dataset("\(path): annotation \(position)'s mask is \(annotation.segmentation.size) (h, w), but "
                                   + "\(image.path) is \(image.header.height)x\(image.header.width) (h x w): the JSON is not this image's")
                }
                try emit((next == 1 ? "\n" : ",\n") + "  {\"id\": \(next), \"image_id\": \(index + 1), \"category_id\": 1, "
                         + "\"segmentation\": {\"size\": \(MaskAnnotation.list(annotation.segmentation.size)), "
                         + "\"counts\": \(JSONText.quoted(annotation.segmentation.counts))}, "
                         + "\"area\": \(annotation.area), \"bbox\": \(MaskAnnotation.list(annotation.bbox)), \"iscrowd\": 0, "
                         + "\"predicted_iou\": \(MaskAnnotation.number(annotation.predictedIoU)), "
                         + "\"stability_score\": \(MaskAnnotation.number(annotation.stabilityScore)), "
                         + "\"point_coords\": [" + annotation.pointCoords.map { "[" + $0.map(MaskAnnotation.number).joined(separator: ", ") + "]" }
                             .joined(separator: ", ") + "], "
                         + "\"crop_box\": \(MaskAnnotation.list(annotation.cropBox))}")
                next += 1
            }
        }
        try emit((next == 1 ? "" : "\n") + "], \"categories\": [{\"id\": 1, \"name\": \"object\"}]}\n")
        return Counts(images: images.count, annotations: next - 1)
    }

    /// One image's annotations as its JSON holds them (upstream's names; NaN as Python writes it).
    static func read(_ path: String) throws(EverythingError) -> [AutomaticMaskReferenceSet.WireAnnotation] {
        do {
            try RegularFile.require(path)
            let decoder = JSONDecoder()
            decoder.allowsJSON5 = true  // Python's json writes NaN and Infinity bare
            return try decoder.decode([AutomaticMaskReferenceSet.WireAnnotation].self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch let error as FormatError {
            throw .dataset("\(error)")
        } catch {
            throw .dataset("\(path): not a list of mask annotations: \(error)")
        }
    }
}
