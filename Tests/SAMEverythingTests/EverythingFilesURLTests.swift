import Foundation
import SAMFiles
import SAMTestSupport
import Testing
@testable import SAMEverything
@testable import SAMEverythingFiles

/// Datasets, runs and COCO merges at file URLs do what their path forms do; a URL that is not a
/// file URL is refused naming it, and nothing is read or written.
@Suite("segment-everything files with URLs")
struct EverythingFilesURLTests {
    static let remote = URL(string: "https://example.com/photos/")!

    @Test("a dataset, a run and its COCO merge at file URLs equal the path forms'")
    func asPaths() throws {
        let (folder, byPath) = try EverythingDatasetTests.smallDataset()
        let dataset = try ImageDataset(contentsOf: URL(fileURLWithPath: folder + "/images"))
        #expect(dataset.source == byPath.source && dataset.images.map(\.path) == byPath.images.map(\.path))
        let run = try EverythingDataset(dataset: dataset, folder: URL(fileURLWithPath: folder + "/out"),
                                        otherInputs: [URL(fileURLWithPath: folder + "/model.samw")])
        #expect(run.folder == folder + "/out" && run.otherInputs == [folder + "/model.samw"])
        try run.prepareFolder()
        for image in dataset.images { try AtomicFile.write(Array("[]\n".utf8), to: run.jsonPath(for: image)) }
        let counts = try COCOInstances.write(run, to: URL(fileURLWithPath: folder + "/coco.json"))
        #expect(counts == COCOInstances.Counts(images: 3, annotations: 0))
        #expect(try String(contentsOfFile: folder + "/coco.json", encoding: .utf8) == COCOInstances.text(run))
    }

    @Test("URLs that are not file URLs are refused naming them; nothing is written")
    func remoteRefused() throws {
        let (folder, dataset) = try EverythingDatasetTests.smallDataset()
        let listed = EverythingDatasetTests.message { _ = try ImageDataset(contentsOf: Self.remote) } ?? ""
        #expect(listed.contains("https://example.com/photos/: not a file URL"), "\(listed)")
        let outputs = EverythingDatasetTests.message { _ = try EverythingDataset(dataset: dataset, folder: Self.remote) } ?? ""
        #expect(outputs.contains("https://example.com/photos/: not a file URL"), "\(outputs)")
        let run = EverythingDataset(dataset: dataset, folder: folder + "/out")
        try run.prepareFolder()
        for image in dataset.images { try AtomicFile.write(Array("[]\n".utf8), to: run.jsonPath(for: image)) }
        let coco = URL(string: "https://example.com/coco.json")!
        let merged = EverythingDatasetTests.message { _ = try COCOInstances.write(run, to: coco) } ?? ""
        #expect(merged.contains("https://example.com/coco.json: not a file URL"), "\(merged)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["images", "out"])
    }
}
