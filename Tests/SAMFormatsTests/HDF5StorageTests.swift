import Foundation
import SAMFiles
import SAMFormats
import SAMTestSupport
import Testing

/// Datasets as h5py and libhdf5 store them: chunked, compressed, allocated early, one chunk or many,
/// read back exactly; partly written or beyond the limits, refused while listing, naming the limit.
@Suite("HDF5 storage: chunked and compressed data read; unwritten, finely chunked or deep refused", .serialized)
struct HDF5StorageTests {
    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("h5storage-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("chunked (many, partial edge chunks, one), deflated and compact datasets read back their values")
    func storedLayoutsRead() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/layouts.h5"
        let values = (0..<(5 * 10)).map { Float($0) * 0.25 - 3 }
        let layouts: [(String, HDF5Builder.Layout)] = [
            ("contiguous", .contiguous), ("compact", .compact), ("chunked", .chunked([2, 4])),
            ("deflated", .chunked([2, 4], deflate: true)), ("one_chunk", .chunked([5, 10], deflate: true)),
        ]
        let builder = try HDF5Builder(path: path)
        for (name, layout) in layouts { try builder.dataset("/" + name, shape: [5, 10], layout: layout, values: values) }
        builder.close()
        try HDF5Builder.withLibrary {
            let file = try HDF5File(path: path)
            for (name, _) in layouts {
                #expect(try file.tensor(named: name).floats() == values, "\(name)")
            }
            let chunked = try #require(file.dataset(named: "deflated")).storage
            #expect(chunked.layout == .chunked && chunked.chunks == 9 && chunked.filters == ["deflate"], "\(chunked)")
        }
    }

    @Test("limits are the reader's: one chunk over the chunk limit, one level over the depth, one object over the count")
    func limitsAreExact() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/small.h5"
        let builder = try HDF5Builder(path: path)
        try builder.dataset("/w", shape: [8], layout: .chunked([1]), values: [Float](repeating: 1, count: 8))
        try builder.nestedGroups(depth: 3)
        builder.close()
        try HDF5Builder.withLibrary {
            var limits = HDF5Limits()
            limits.maximumChunksPerDataset = 8
            limits.maximumGroupDepth = 3
            limits.maximumObjects = 5  // /w, /g, /g/g, /g/g/g: 4 links
            _ = try HDF5File(path: path, limits: limits)
            for (field, value) in [("chunks", 7), ("depth", 2), ("objects", 3)] {
                var tighter = limits
                switch field {
                case "chunks": tighter.maximumChunksPerDataset = value
                case "depth": tighter.maximumGroupDepth = value
                default: tighter.maximumObjects = value
                }
                do {
                    _ = try HDF5File(path: path, limits: tighter)
                    Issue.record("\(field) limit \(value) not enforced")
                } catch let error as FormatError {
                    #expect(error.code == .limitExceeded && error.message.contains("\(value)"), "\(field): \(error)")
                }
            }
        }
    }

    @Test("a chunked dataset with chunks never written is refused: it would read as fill values")
    func partlyWritten() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/partial.h5"
        let builder = try HDF5Builder(path: path)
        try builder.dataset("/w", shape: [64], layout: .chunked([16], deflate: true))
        try builder.dataset("/contiguous_unwritten", shape: [64])
        builder.close()
        try HDF5Builder.withLibrary {
            do {
                _ = try HDF5File(path: path)
                Issue.record("unwritten data accepted")
            } catch let error as FormatError {
                #expect(error.code == .sizeMismatch && error.message.contains("never written"), "\(error)")
            }
        }
    }
}
