import Foundation
import SAMTestSupport
import Testing

/// Hostile HDF5 files, made in the test through libhdf5 (`HDF5Builder`): link cycles and diamonds,
/// deep groups, many objects, chunk grids, unwritten or inflating data, links and storage that lead
/// out of the file. `saminspect --stats` and `samconvert` each exit 1 or 2 within 5 s and 200 MB,
/// naming the file and the limit; nothing outside the file is read.
@Suite("Hostile HDF5: links, depth, counts, storage, data outside the file", .serialized)
struct HDF5HostileTests {
    static let config = HostileCorpus.tiny + "/config.json"

    /// saminspect --stats and samconvert on `path`, both refused with `mentions` in the message.
    func refusedByBoth(_ label: String, _ path: String, mentions: [String], folder: String) throws {
        let name = (path as NSString).lastPathComponent
        try HostileRun(label: label, tool: saminspect, arguments: ["--stats", path], mentions: [name] + mentions).check()
        let output = folder + "/out.samw"
        try HostileRun(label: label, tool: samconvert, arguments: [path, "--config", Self.config, "--out", output],
                       mentions: [name] + mentions, output: output).check()
    }

    /// A fuzzed link message that makes libhdf5 itself dereference NULL (H5G_link_to_info): the fault
    /// is contained, and both tools exit 2 naming the file and the library, with nothing written.
    @Test("a file that crashes libhdf5 itself: exit 2 naming the file, no signal, no output")
    func libraryFaultContained() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus/regressions").path
        let path = folder + "/link-message.h5"
        try FileManager.default.copyItem(atPath: corpus + "/HDF5-fd3aee3891ba.h5", toPath: path)
        let name = (path as NSString).lastPathComponent
        try HostileRun(label: "libhdf5 fault", tool: saminspect, arguments: [path],
                       mentions: [name, "libhdf5 crashed while reading this file"], expected: [2]).check()
        let output = folder + "/out.samw"
        try HostileRun(label: "libhdf5 fault", tool: samconvert, arguments: [path, "--config", Self.config, "--out", output],
                       mentions: [name, "libhdf5 crashed while reading this file"], output: output, expected: [2]).check()
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "temporaries left behind: \(leftovers)")
    }

    @Test("a hard-link cycle and a diamond of 2^40 paths: each group listed once, in milliseconds")
    func cyclesAndDiamonds() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let cycle = try HDF5Builder(path: folder + "/cycle.h5")
        try cycle.group("/a")
        try cycle.group("/a/b")
        try cycle.dataset("/a/b/mask_decoder.iou_token.weight", shape: [4, 32], values: [Float](repeating: 1, count: 128))
        try cycle.hardLink("/", at: "/a/b/up")  // /a/b/up/a/b/up/... forever
        try cycle.hardLink("/a", at: "/a/b/again")
        cycle.close()
        let diamond = try HDF5Builder(path: folder + "/diamond.h5")
        for level in 0...40 { try diamond.group("/g\(level)") }
        for level in 0..<40 {
            try diamond.hardLink("/g\(level + 1)", at: "/g\(level)/a")
            try diamond.hardLink("/g\(level + 1)", at: "/g\(level)/b")
        }
        try diamond.dataset("/g40/mask_decoder.iou_token.weight", shape: [4, 32], values: [Float](repeating: 1, count: 128))
        diamond.close()
        for (label, path) in [("HDF5 hard-link cycle", folder + "/cycle.h5"), ("HDF5 diamond, 2^40 paths", folder + "/diamond.h5")] {
            // A valid file once each group is visited once: listed (exit 0), its one dataset shown once.
            let listed = try HostileRun(label: label, tool: saminspect, arguments: ["--stats", path], expected: [0]).check()
            #expect(listed.status == 0, "\(label): \(listed.stderr)")
            let output = folder + "/out.samw"
            // One decoder weight is not a model: refused, quickly.
            try HostileRun(label: label, tool: samconvert, arguments: [path, "--config", Self.config, "--out", output],
                           mentions: ["mask_decoder"], output: output).check()
        }
        let lines = try saminspect.run([folder + "/diamond.h5"]).stdout.split(separator: "\n")
        #expect(lines.filter { $0.contains("iou_token.weight") }.count == 1, "\(lines)")
    }

    @Test("groups nested 5,000 and 65 deep are refused at 64; 64 deep is read")
    func deepGroups() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        for depth in [5000, 65, 64] {
            let builder = try HDF5Builder(path: folder + "/deep\(depth).h5")
            try builder.nestedGroups(depth: depth)
            builder.close()
        }
        try refusedByBoth("HDF5 groups 5,000 deep", folder + "/deep5000.h5", mentions: ["64", "[limitExceeded]"], folder: folder)
        try refusedByBoth("HDF5 groups 65 deep", folder + "/deep65.h5", mentions: ["64", "[limitExceeded]"], folder: folder)
        let boundary = try saminspect.run([folder + "/deep64.h5"])
        #expect(boundary.status == 0, "64 deep: \(boundary.stderr)")
    }

    @Test("100,000 datasets are refused before they are listed; 20,000 list in seconds")
    func manyObjects() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let many = try HDF5Builder(path: folder + "/many.h5")
        try many.scalarDatasets(count: 100_000)
        many.close()
        try refusedByBoth("HDF5 100,000 datasets", folder + "/many.h5", mentions: ["20000", "[limitExceeded]"], folder: folder)
        let atLimit = try HDF5Builder(path: folder + "/limit.h5")
        try atLimit.group("/image_encoder")
        try atLimit.scalarDatasets(count: 19_999, in: "/image_encoder")
        atLimit.close()
        // Listing work is linear: every dataset's metadata and storage, 20,000 of them.
        try HostileRun(label: "HDF5 20,000 datasets (at the limit)", tool: saminspect, arguments: [folder + "/limit.h5"],
                       expected: [0]).check()
    }

    @Test("unwritten, inflating or finely chunked data is refused from its metadata, not read")
    func storage() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let gib = 1 << 30
        let huge = try HDF5Builder(path: folder + "/unwritten-4x15GiB.h5")
        try huge.dataset("/image_encoder.neck.0.weight", shape: [4, 15 * gib / 4], layout: .chunked([1, 1 << 20], deflate: true))
        huge.close()
        try refusedByBoth("HDF5 gzip dataset 4 x 15 GiB, chunks never written", folder + "/unwritten-4x15GiB.h5",
                          mentions: ["17179869184", "[limitExceeded]"], folder: folder)
        let four = try HDF5Builder(path: folder + "/unwritten-15GiB-x4.h5")
        for index in 0..<4 {
            try four.dataset("/image_encoder.neck.\(index).weight", shape: [15 * gib / 4], layout: .chunked([1 << 22], deflate: true))
        }
        four.close()
        try refusedByBoth("HDF5 four gzip datasets of 15 GiB, never written", folder + "/unwritten-15GiB-x4.h5",
                          mentions: ["only 0 of its 960 chunks are stored"], folder: folder)
        // The dataset is not one the model uses: it is refused while listing, never read.
        let unused = try HDF5Builder(path: folder + "/unused-3GiB.h5")
        try unused.dataset("/optimizer.exp_avg", shape: [3 * gib / 4], layout: .chunked([1 << 20], deflate: true))
        try unused.dataset("/mask_decoder.iou_token.weight", shape: [4, 32], values: [Float](repeating: 1, count: 128))
        unused.close()
        try refusedByBoth("HDF5 3 GiB chunked dataset, a few bytes stored, unused", folder + "/unused-3GiB.h5",
                          mentions: ["optimizer.exp_avg", "never written"], folder: folder)
        let chunks = try HDF5Builder(path: folder + "/million-chunks.h5")
        try chunks.dataset("/mask_decoder.iou_token.weight", shape: [1 << 20], layout: .chunked([1], allocateEarly: true))
        chunks.close()
        try refusedByBoth("HDF5 dataset in 1,048,576 one-element chunks", folder + "/million-chunks.h5",
                          mentions: ["1048576 chunks", "65536", "[limitExceeded]"], folder: folder)
        // zlib.compress(bytes(16)): a valid deflate stream, 11 bytes, declared as one 64 MiB chunk.
        let bomb = try HDF5Builder(path: folder + "/inflate-bomb.h5")
        try bomb.dataset("/image_encoder.pos_embed", shape: [1 << 24],
                         layout: .precompressedChunk(stored: [120, 156, 99, 96, 64, 5, 0, 0, 16, 0, 1]))
        bomb.close()
        try refusedByBoth("HDF5 64 MiB gzip dataset stored in 11 bytes", folder + "/inflate-bomb.h5",
                          mentions: ["11 stored bytes", "67108864", "1100x", "[limitExceeded]"], folder: folder)
    }

    @Test("external links (beside, ../..), links through them, external storage, virtual datasets: refused, nothing read")
    func dataOutsideTheFile() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let other = try HDF5Builder(path: folder + "/other.h5")
        try other.dataset("/mask_decoder.iou_token.weight", shape: [4, 32], values: [Float](repeating: 7, count: 128))
        other.close()
        let cases: [(name: String, label: String, mentions: [String], build: (HDF5Builder) throws -> Void)] = [
            ("external-link.h5", "HDF5 external link to another file", ["external link", "[unsafePath]"],
             { try $0.externalLink(to: "other.h5", object: "/", at: "/mask_decoder") }),
            ("external-link-up.h5", "HDF5 external link to ../../etc", ["external link", "[unsafePath]"],
             { try $0.externalLink(to: "../../etc/other.h5", object: "/", at: "/mask_decoder") }),
            ("soft-through-external.h5", "HDF5 soft link through an external link", ["cannot open object"],
             { builder in
                 try builder.group("/z")
                 try builder.externalLink(to: "other.h5", object: "/", at: "/z/elsewhere")
                 try builder.softLink("/z/elsewhere/mask_decoder.iou_token.weight", at: "/a")
             }),
            ("external-storage.h5", "HDF5 external storage in /etc/passwd", ["external storage", "/etc/passwd", "[unsafePath]"],
             { try $0.dataset("/mask_decoder.iou_token.weight", shape: [64], layout: .external(file: "/etc/passwd", offset: 0, size: 64)) }),
            ("virtual.h5", "HDF5 virtual dataset mapping another file", ["virtual dataset", "[unsafePath]"],
             { try $0.virtualDataset("/mask_decoder.iou_token.weight", shape: [4, 32], sourceFile: folder + "/other.h5",
                                     sourceDataset: "/mask_decoder.iou_token.weight") }),
        ]
        for (name, label, mentions, build) in cases {
            let builder = try HDF5Builder(path: folder + "/" + name)
            try build(builder)
            builder.close()
            try refusedByBoth(label, folder + "/" + name, mentions: mentions, folder: folder)
        }
    }

    @Test("flat and nested spellings of one key: an error naming both paths")
    func duplicateKeys() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let builder = try HDF5Builder(path: folder + "/duplicate.h5")
        try builder.dataset("/mask_decoder.iou_token.weight", shape: [4, 32], values: [Float](repeating: 0, count: 128))
        try builder.group("/mask_decoder")
        try builder.group("/mask_decoder/iou_token")
        try builder.dataset("/mask_decoder/iou_token/weight", shape: [4, 32], values: [Float](repeating: 1, count: 128))
        builder.close()
        try refusedByBoth("HDF5 flat and nested spellings of one key", folder + "/duplicate.h5",
                          mentions: ["/mask_decoder.iou_token.weight", "/mask_decoder/iou_token/weight", "[duplicateName]"], folder: folder)
    }

    @Test("a dataset the model does not use is listed, not read: converting beside a 256 MiB one stays small")
    func unusedDatasetsAreNotRead() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let path = folder + "/with-optimizer-state.h5"
        try FileManager.default.copyItem(atPath: HostileCorpus.tiny + "/mobile_sam.h5", toPath: path)
        let builder = try HDF5Builder(appendingTo: path)
        try builder.dataset("/optimizer.exp_avg", shape: [1 << 26], values: [Float](repeating: 0.5, count: 1 << 26))
        builder.close()
        let output = folder + "/out.samw"
        let converted = try HostileRun(label: "HDF5 tiny model beside an unused 256 MiB dataset", tool: samconvert,
                                       arguments: [path, "--config", Self.config, "--allow-unmapped", "--out", output],
                                       expected: [0], megabytes: 150).check()
        #expect(converted.status == 0, "\(converted.stderr)")
        // The control: reading every dataset (--stats) holds the 256 MiB at once, so the figure above
        // would have shown it had conversion read the unused dataset.
        let stats = try saminspect.measured(["--stats", path])
        #expect(stats.status == 0 && stats.maxResidentMegabytes > 256, "control: \(stats.maxResidentMegabytes) MB \(stats.stderr)")
    }
}
