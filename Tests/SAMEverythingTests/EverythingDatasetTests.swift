import Foundation
import SAMFiles
import SAMFormats
import SAMImage
import SAMImageFiles
import SAMPipeline
import SAMTestSupport
import Testing
@testable import SAMEverything
@testable import SAMEverythingFiles
#if canImport(Glibc)
import Glibc
#endif

/// Dataset mode's library parts: listing a folder or a list file, shards, output names, the checks
/// made before any work, and the COCO merge.
@Suite("EverythingDataset: listing, shards, outputs, COCO merge")
struct EverythingDatasetTests {
    static let jpeg = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("SAMImageTests/Fixtures/gray.jpg").path

    /// A PNG of `width` x `height` whose pixels depend on `seed`.
    static func png(_ path: String, width: Int = 6, height: Int = 4, seed: Int = 0) throws {
        var image = RGBImage(width: width, height: height)
        for index in image.pixels.indices { image.pixels[index] = UInt8(truncatingIfNeeded: index * 7 + seed * 31) }
        try ImageIO.writePNG(image, to: path)
    }

    static func folder() throws -> String { try TestPaths.temporaryFolder("amg-dataset") }

    static func message(_ body: () throws -> Void) -> String? {
        do { try body() } catch { return "\(error)" }
        return nil
    }

    @Test("a folder: its PNG and JPEG files by extension, sorted by UTF-8 bytes; hidden files, other files and subfolders left out")
    func folderListing() throws {
        let folder = try Self.folder()
        try Self.png(folder + "/b.png", width: 9, height: 3)
        try FileManager.default.copyItem(atPath: Self.jpeg, toPath: folder + "/a.jpg")
        try Self.png(folder + "/C.PNG")
        try Self.png(folder + "/d.photo.jpeg")
        try Self.png(folder + "/.hidden.png")
        try Data("notes".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
        try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: true)
        try Self.png(folder + "/sub/e.png")
        let dataset = try ImageDataset(folder)
        #expect(dataset.source == .folder(folder))
        #expect(dataset.images.map(\.name) == ["C.PNG", "a.jpg", "b.png", "d.photo.jpeg"])
        #expect(dataset.images.map(\.outputName) == ["C.json", "a.json", "b.json", "d.photo.json"])
        #expect(dataset.images.map(\.path) == ["C.PNG", "a.jpg", "b.png", "d.photo.jpeg"].map { folder + "/" + $0 })
        let decoded = try ImageIO.read(Self.jpeg)
        #expect(dataset.images[1].header == ImageHeader(format: .jpeg, width: decoded.width, height: decoded.height))
        #expect(dataset.images[2].header == ImageHeader(format: .png, width: 9, height: 3))
    }

    @Test("a list file: paths relative to its folder or absolute, trimmed, comments and blank lines skipped, sorted")
    func listFile() throws {
        let folder = try Self.folder()
        try FileManager.default.createDirectory(atPath: folder + "/lists", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/photos", withIntermediateDirectories: true)
        try Self.png(folder + "/photos/z.png")
        try Self.png(folder + "/photos/y.png", width: 5, height: 7)
        try Self.png(folder + "/lists/near.png")
        let list = folder + "/lists/images.txt"
        try Data("# the photos\n../photos/z.png\r\n\n   near.png  \n\(folder)/photos/y.png\n  # indented comment\n".utf8)
            .write(to: URL(fileURLWithPath: list))
        let dataset = try ImageDataset(list)
        #expect(dataset.source == .list(list))
        #expect(dataset.images.map(\.name) == ["../photos/z.png", "\(folder)/photos/y.png", "near.png"])
        #expect(dataset.images.map(\.stem) == ["z", "y", "near"])
        #expect(FileManager.default.contentsEqual(atPath: dataset.images[0].path, andPath: folder + "/photos/z.png"))
        #expect(dataset.images[1].header.width == 5 && dataset.images[1].header.height == 7)
        #expect(dataset.inputPaths.contains(list))
    }

    @Test("refused before any work: a missing file, a non-image, a folder, two images with one stem, nothing to do, an image as the list")
    func refusals() throws {
        let folder = try Self.folder()
        try Self.png(folder + "/a.png")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: folder + "/text.png"))
        try FileManager.default.createDirectory(atPath: folder + "/dir.png", withIntermediateDirectories: true)
        let list = folder + "/list.txt"
        try Data("a.png\nmissing.png\ntext.png\ndir.png\n".utf8).write(to: URL(fileURLWithPath: list))
        let listed = Self.message { _ = try ImageDataset(listFile: list) } ?? ""
        #expect(listed.contains("3 image(s) cannot be used"), "\(listed)")
        #expect(listed.contains("line 2: missing.png") && listed.contains("No such file"), "\(listed)")
        #expect(listed.contains("line 3: text.png") && listed.contains("not a PNG or JPEG"), "\(listed)")
        #expect(listed.contains("line 4: dir.png") && listed.contains("a directory"), "\(listed)")
        // The folder itself: text.png and dir.png are refused by name too.
        let inFolder = Self.message { _ = try ImageDataset(folder: folder) } ?? ""
        #expect(inFolder.contains("text.png") && inFolder.contains("dir.png"), "\(inFolder)")

        let clash = try Self.folder()
        try Self.png(clash + "/a.png")
        try FileManager.default.copyItem(atPath: Self.jpeg, toPath: clash + "/a.jpg")
        try Self.png(clash + "/B.png")
        try Self.png(clash + "/b.png")
        try Self.png(clash + "/c.png")
        let clashes = Self.message { _ = try ImageDataset(clash) } ?? ""
        #expect(clashes.contains("2 output name(s) taken twice"), "\(clashes)")
        #expect(clashes.contains("a.jpg and a.png both map to a.json"), "\(clashes)")
        #expect(clashes.contains("B.png and b.png"), "\(clashes)")

        let empty = try Self.folder()
        try Self.png(empty + "/.hidden.png")
        #expect(Self.message { _ = try ImageDataset(empty) }?.contains("no images") == true)
        let blank = empty + "/blank.txt"
        try Data("# nothing\n\n".utf8).write(to: URL(fileURLWithPath: blank))
        #expect(Self.message { _ = try ImageDataset(blank) }?.contains("no images") == true)
        #expect(Self.message { _ = try ImageDataset(folder + "/a.png") }?.contains("is an image, not a folder or a list") == true)
        #expect(Self.message { _ = try ImageDataset(folder + "/nowhere") }?.contains("no such folder or list file") == true)

        let big = try Self.folder()
        try Self.png(big + "/big.png", width: 40, height: 30)
        let over = Self.message { _ = try ImageDataset(big, limits: ImageLimits(maxPixels: 1000)) } ?? ""
        #expect(over.contains("big.png") && over.contains("40x30") && over.contains("1000"), "\(over)")
        #expect(try ImageDataset(big, limits: ImageLimits(maxPixels: 1200)).images.count == 1)
    }

    @Test("a FIFO named like an image is refused at once, never opened for reading")
    func fifo() throws {
        let folder = try Self.folder()
        try Self.png(folder + "/a.png")
        #expect(mkfifo(folder + "/pipe.png", 0o600) == 0)
        let started = Date()
        let text = Self.message { _ = try ImageDataset(folder) } ?? ""
        #expect(text.contains("pipe.png") && text.contains("FIFO"), "\(text)")
        #expect(Date().timeIntervalSince(started) < 1)
    }

    @Test("shards: I/N parsed strictly; shard I holds the images whose index % N == I, and the shards cover each image once")
    func shards() throws {
        #expect(try DatasetShard(parsing: "0/4") == DatasetShard(index: 0, count: 4))
        #expect(try DatasetShard(parsing: "3/4").description == "3/4")
        for bad in ["5/4", "4/4", "-1/4", "1/0", "0/0", "abc", "1/4/2", "1", "/4", "1/", "+1/4", " 1/4", "1.0/4", "0x1/4", "--1/4"] {
            #expect(Self.message { _ = try DatasetShard(parsing: bad) }?.contains("--shard") == true, "\(bad) was accepted")
        }
        let folder = try Self.folder()
        for index in 0..<11 { try Self.png(folder + "/img\(String(format: "%02d", index)).png", seed: index) }
        let dataset = try ImageDataset(folder)
        for count in 1...5 {
            var seen: [Int] = []
            for index in 0..<count {
                let part = dataset.images(in: try DatasetShard(index: index, count: count))
                #expect(part.allSatisfy { $0.position % count == index })
                #expect(part.map(\.image) == part.map { dataset.images[$0.position] })
                seen += part.map(\.position)
            }
            #expect(seen.sorted() == Array(0..<11), "\(count) shards")
        }
        #expect(dataset.images(in: try DatasetShard(index: 2, count: 4)).map(\.image.name) == ["img02.png", "img06.png", "img10.png"])
    }

    @Test("ImageIO.header reads a JPEG's size past 128 KB of APP segments, and refuses what is not an image")
    func headers() throws {
        let folder = try Self.folder()
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.jpeg)))
        let segment: [UInt8] = [0xFF, 0xE1, 0xFF, 0xFF] + [UInt8](repeating: 0x41, count: 0xFFFF - 2)
        bytes.insert(contentsOf: segment + segment + segment, at: 2)
        let padded = folder + "/padded.jpg"
        try Data(bytes).write(to: URL(fileURLWithPath: padded))
        let decoded = try ImageIO.read(padded)
        #expect(try ImageIO.header(padded) == ImageHeader(format: .jpeg, width: decoded.width, height: decoded.height))
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0, 0]).write(to: URL(fileURLWithPath: folder + "/noframe.jpg"))
        #expect(Self.message { _ = try ImageIO.header(folder + "/noframe.jpg") }?.contains("no frame header") == true)
        try Data().write(to: URL(fileURLWithPath: folder + "/empty.png"))
        #expect(Self.message { _ = try ImageIO.header(folder + "/empty.png") }?.contains("empty file") == true)
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0]).write(to: URL(fileURLWithPath: folder + "/short.png"))
        #expect(Self.message { _ = try ImageIO.header(folder + "/short.png") }?.contains("no IHDR") == true)
    }

    // MARK: - Outputs and the merge

    /// An annotation of a `width` x `height` image: the rectangle x0..<x1, y0..<y1.
    static func annotation(width: Int, height: Int, x0: Int, y0: Int, x1: Int, y1: Int, iou: Float, stability: Float) throws -> MaskAnnotation {
        var pixels = [UInt8](repeating: 0, count: width * height)
        for y in y0..<y1 { for x in x0..<x1 { pixels[y * width + x] = 1 } }
        let rle = UncompressedRLE(mask: try BinaryMask(width: width, height: height, pixels: pixels))
        return MaskAnnotation(segmentation: rle, area: rle.area, bbox: [x0, y0, x1 - x0 - 1, y1 - y0 - 1], predictedIoU: iou,
                              pointCoords: [Double(x0) + 0.5, Double(y0) + 0.25], stabilityScore: stability, cropBox: [0, 0, width, height])
    }

    /// Three images (6x4, 5x7, 6x4) in `folder/images`, JSONs in `folder/out`.
    static func smallDataset() throws -> (folder: String, dataset: ImageDataset) {
        let folder = try Self.folder()
        try FileManager.default.createDirectory(atPath: folder + "/images", withIntermediateDirectories: true)
        try Self.png(folder + "/images/b \"quoted\".png", seed: 1)
        try Self.png(folder + "/images/a.png", width: 5, height: 7, seed: 2)
        try Self.png(folder + "/images/c.png", seed: 3)
        return (folder, try ImageDataset(folder + "/images"))
    }

    @Test("the merge: ids from the sorted list, annotations in image then JSON order, every field; the same text however the JSONs were written")
    func merge() throws {
        let (folder, dataset) = try Self.smallDataset()
        let run = EverythingDataset(dataset: dataset, folder: folder + "/out")
        #expect(run.pending().count == 3)
        #expect(throws: EverythingError.self) { try COCOInstances.text(run) }
        let missing = Self.message { _ = try COCOInstances.text(run) } ?? ""
        #expect(missing.contains("3 of 3 images have no JSON"), "\(missing)")
        try run.prepareFolder()
        let annotations: [String: [MaskAnnotation]] = [
            "a.png": [try Self.annotation(width: 5, height: 7, x0: 1, y0: 2, x1: 4, y1: 6, iou: 0.9375, stability: 0.96875)],
            "b \"quoted\".png": [],
            "c.png": [try Self.annotation(width: 6, height: 4, x0: 0, y0: 0, x1: 3, y1: 2, iou: 0.875, stability: .nan),
                      try Self.annotation(width: 6, height: 4, x0: 2, y0: 1, x1: 6, y1: 4, iou: 0.123456789, stability: 1)],
        ]
        // Written in reverse order: the merge follows the dataset's order, not the files'.
        for image in dataset.images.reversed() {
            try AtomicFile.write(Array(MaskAnnotation.jsonText(annotations[image.name]!).utf8), to: run.jsonPath(for: image))
        }
        #expect(run.pending().isEmpty && run.missing().isEmpty)
        let text = try COCOInstances.text(run)
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        struct File: Decodable {
            struct Image: Decodable, Equatable { var id: Int; var file_name: String; var width: Int; var height: Int }
            struct Annotation: Decodable {
                struct RLE: Decodable { var size: [Int]; var counts: String }
                var id: Int; var image_id: Int; var category_id: Int; var segmentation: RLE; var area: Int; var bbox: [Int]
                var iscrowd: Int; var predicted_iou: Double; var stability_score: Double; var point_coords: [[Double]]; var crop_box: [Int]
            }
            struct Category: Decodable, Equatable { var id: Int; var name: String }
            var images: [Image]; var annotations: [Annotation]; var categories: [Category]
        }
        let file = try decoder.decode(File.self, from: Data(text.utf8))
        #expect(file.images == [File.Image(id: 1, file_name: "a.png", width: 5, height: 7),
                                File.Image(id: 2, file_name: "b \"quoted\".png", width: 6, height: 4),
                                File.Image(id: 3, file_name: "c.png", width: 6, height: 4)])
        #expect(file.categories == [File.Category(id: 1, name: "object")])
        #expect(file.annotations.map(\.id) == [1, 2, 3])
        #expect(file.annotations.map(\.image_id) == [1, 3, 3])
        let expected = annotations["a.png"]! + annotations["c.png"]!
        for (merged, original) in zip(file.annotations, expected) {
            #expect(merged.category_id == 1 && merged.iscrowd == 0)
            #expect(merged.segmentation.size == [original.segmentation.height, original.segmentation.width])
            #expect(merged.segmentation.counts == (try COCORLE(original.segmentation)).counts)
            #expect(merged.area == original.area && merged.bbox == original.bbox && merged.crop_box == original.cropBox)
            #expect(merged.predicted_iou == Double(original.predictedIoU))
            #expect(merged.stability_score.isNaN == original.stabilityScore.isNaN)
            if !original.stabilityScore.isNaN { #expect(merged.stability_score == Double(original.stabilityScore)) }
            #expect(merged.point_coords == [original.pointCoords])
        }
        #expect(text.contains("\"stability_score\": NaN"))
        #expect(text.contains("\"predicted_iou\": 0.12345679104328156"))  // the float32, printed as Python prints the double
        // Written through the streaming writer: the same bytes.
        let counts = try COCOInstances.write(run, to: folder + "/coco.json")
        #expect(counts == COCOInstances.Counts(images: 3, annotations: 3))
        #expect(try String(contentsOfFile: folder + "/coco.json", encoding: .utf8) == text)
        // A run of any shard merges the whole dataset.
        let shardRun = EverythingDataset(dataset: dataset, folder: folder + "/out", shard: try DatasetShard(index: 1, count: 2))
        #expect(try COCOInstances.text(shardRun) == text)
        // An empty dataset of annotations.
        for image in dataset.images { try AtomicFile.write(Array("[]\n".utf8), to: run.jsonPath(for: image)) }
        let none = try COCOInstances.text(run)
        #expect(none.hasSuffix("], \"annotations\": [], \"categories\": [{\"id\": 1, \"name\": \"object\"}]}\n"), "\(none)")
    }

    @Test("the merge refuses a JSON that is not a list of annotations, or whose masks are another image's size")
    func mergeRefusals() throws {
        let (folder, dataset) = try Self.smallDataset()
        let run = EverythingDataset(dataset: dataset, folder: folder + "/out")
        try run.prepareFolder()
        for image in dataset.images { try AtomicFile.write(Array("[]\n".utf8), to: run.jsonPath(for: image)) }
        let wrongSize = try Self.annotation(width: 6, height: 4, x0: 0, y0: 0, x1: 2, y1: 2, iou: 0.5, stability: 0.5)
        try AtomicFile.write(Array(MaskAnnotation.jsonText([wrongSize]).utf8), to: run.jsonPath(for: dataset.images[0]))
        let size = Self.message { _ = try COCOInstances.text(run) } ?? ""
        #expect(size.contains("a.json") && size.contains("not this image's"), "\(size)")
        try AtomicFile.write(Array("{\"not\": \"a list\"}".utf8), to: run.jsonPath(for: dataset.images[0]))
        let shape = Self.message { _ = try COCOInstances.write(run, to: folder + "/coco.json") } ?? ""
        #expect(shape.contains("a.json") && shape.contains("not a list of mask annotations"), "\(shape)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/coco.json"))
    }

    @Test("outputs: pending and missing by shard; a directory, a link or an input at a JSON's name is refused, touching nothing")
    func outputs() throws {
        let (folder, dataset) = try Self.smallDataset()
        let out = folder + "/out"
        let shard = try DatasetShard(index: 0, count: 2)
        let run = EverythingDataset(dataset: dataset, folder: out, shard: shard)
        try run.checkOutputs()  // an absent folder is fine
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(run.shardImages.map(\.name) == ["a.png", "c.png"])
        try run.prepareFolder()
        try AtomicFile.write(Array("[]\n".utf8), to: out + "/c.json")
        #expect(run.pending().map(\.name) == ["a.png"])
        #expect(run.missing().map(\.name) == ["a.png", "b \"quoted\".png"])

        try FileManager.default.createDirectory(atPath: out + "/a.json", withIntermediateDirectories: true)
        #expect(Self.message { try run.checkOutputs() }?.contains("a.json is a directory") == true)
        try FileManager.default.removeItem(atPath: out + "/a.json")
        try FileManager.default.createSymbolicLink(atPath: out + "/a.json", withDestinationPath: out + "/c.json")
        #expect(Self.message { try run.checkOutputs() }?.contains("a symbolic link") == true)
        try FileManager.default.removeItem(atPath: out + "/a.json")
        // An image's JSON name taken by one of the inputs (the images folder used as --out, an image named so).
        try FileManager.default.copyItem(atPath: dataset.images[0].path, toPath: folder + "/images/c.json")
        let inside = EverythingDataset(dataset: try ImageDataset(folder + "/images"), folder: folder + "/images", otherInputs: [])
        try inside.checkOutputs()  // c.json is not an image of the folder (extension): nothing wrong
        let list = folder + "/list.txt"
        try Data("images/a.png\nimages/c.json\n".utf8).write(to: URL(fileURLWithPath: list))
        let listed = EverythingDataset(dataset: try ImageDataset(list), folder: folder + "/images")
        #expect(Self.message { try listed.checkOutputs() }?.contains("c.json is one of the run's inputs") == true)
        // --out a file.
        let fileOut = EverythingDataset(dataset: dataset, folder: dataset.images[0].path)
        #expect(Self.message { try fileOut.checkOutputs() }?.contains("is not a folder") == true)
    }

    @Test("the documented API on the tiny model: each JSON is the generator's list for its image, progress counts and estimates")
    func api() throws {
        let folder = try Self.folder()
        let model = try TestModels.tiny(in: folder)
        try FileManager.default.createDirectory(atPath: folder + "/photos", withIntermediateDirectories: true)
        for index in 0..<5 { try Self.png(folder + "/photos/p\(index).png", width: 24 + index, height: 20, seed: index) }
        try Data("photos/p4.png\nphotos/p0.png\nphotos/p2.png\nphotos/p1.png\n".utf8).write(to: URL(fileURLWithPath: folder + "/photos.txt"))

        let dataset = try ImageDataset(folder + "/photos.txt", limits: .default)
        let run = EverythingDataset(dataset: dataset, folder: folder + "/masks", shard: try DatasetShard(parsing: "0/2"),
                                    otherInputs: [model])
        try run.checkOutputs()
        let settings = AutomaticMaskSettings(pointsPerSide: 2, predIoUThresh: 0, stabilityScoreThresh: 0)
        let generator = try AutomaticMaskGenerator(segmenter: try SegmentAnything(modelPath: model), settings: settings)
        var seen: [DatasetProgress] = []
        let summary = try run.run(with: generator) { seen.append($0) }
        #expect(seen.map(\.image.name) == ["photos/p0.png", "photos/p2.png"])
        #expect(seen.map(\.done) == [1, 2] && seen.allSatisfy { $0.total == 2 })
        #expect(seen.last?.secondsLeft == 0 && (seen.first?.secondsLeft ?? 0) > 0)
        #expect(summary.segmented == 2 && summary.skipped == 0 && summary.masks == seen.map(\.masks).reduce(0, +))
        #expect(run.missing().map(\.name) == ["photos/p1.png", "photos/p4.png"])
        for image in run.shardImages {
            let expected = MaskAnnotation.jsonText(try generator.generate(try ImageIO.read(image.path)))
            #expect(try String(contentsOfFile: run.jsonPath(for: image), encoding: .utf8) == expected, "\(image.name)")
        }
        // Again: everything is there, nothing is segmented.
        let again = try run.run(with: generator) { _ in Issue.record("segmented again") }
        #expect(again == DatasetProgress.Summary(skipped: 2, segmented: 0, masks: 0, seconds: 0))
        let other = EverythingDataset(dataset: dataset, folder: folder + "/masks", shard: try DatasetShard(parsing: "1/2"))
        try other.run(with: generator)
        if run.missing().isEmpty {
            try COCOInstances.write(run, to: folder + "/masks.coco.json")
        }
        #expect(try String(contentsOfFile: folder + "/masks.coco.json", encoding: .utf8) == COCOInstances.text(other))
    }

    @Test("durations for the progress line")
    func durations() {
        #expect(DatasetProgress.duration(3.25) == "3.2 s" || DatasetProgress.duration(3.25) == "3.3 s")
        #expect(DatasetProgress.duration(42) == "42 s")
        #expect(DatasetProgress.duration(200) == "3 min 20 s")
        #expect(DatasetProgress.duration(7500) == "2 h 05 min")
        #expect(DatasetProgress.duration(.nan) == "unknown")
    }
}
