import CHDF5
import SAMFiles
import SAMTensor

/// How a dataset's bytes are kept in its file, read from its creation properties while listing.
public struct HDF5Storage: Sendable, Equatable, CustomStringConvertible {
    public enum Layout: String, Sendable {
        case compact, contiguous, chunked
    }

    public let layout: Layout
    /// Filter names in pipeline order (`deflate`, `shuffle` ...); empty when the bytes are stored as they are.
    public let filters: [String]
    /// Bytes allocated in the file for the data (compressed size when filtered).
    public let storedBytes: Int
    /// Chunks the dataset is split into (0 unless chunked).
    public let chunks: Int

    public var description: String {
        var text = layout.rawValue
        if layout == .chunked { text += " x\(chunks)" }
        if !filters.isEmpty { text += " " + filters.joined(separator: "+") }
        return text
    }
}

extension HDF5Storage {
    /// Reads the storage of dataset `id` and refuses what would read outside the file (virtual
    /// datasets, external storage), what is split too finely, what is not all stored (unwritten
    /// chunks or an unallocated layout read as fill values), and what would inflate far beyond its
    /// stored bytes. `declaredBytes` is the data's size in the file's own element type.
    static func inspect(_ id: hid_t, key: String, declaredBytes: Int, shape: [Int], file: String, fileSize: Int,
                        limits: HDF5Limits) throws(FormatError) -> HDF5Storage {
        let creation = H5Dget_create_plist(id)
        guard creation >= 0 else { throw FormatError(.corrupt, file: file, tensor: key, "no creation properties") }
        defer { H5Pclose(creation) }
        let layoutCode = H5Pget_layout(creation)
        if layoutCode == H5D_VIRTUAL {
            throw FormatError(.unsafePath, file: file, tensor: key,
                              "a virtual dataset (its data maps to other datasets, possibly in other files); refused: data must be stored in the file given")
        }
        let externalFiles = H5Pget_external_count(creation)
        if externalFiles != 0 {
            throw FormatError(.unsafePath, file: file, tensor: key,
                              "its data is kept outside the file (HDF5 external storage in \(externalName(creation) ?? "another file")); refused: data must be stored in the file given")
        }
        let layout: Layout
        switch layoutCode {
        case H5D_COMPACT: layout = .compact
        case H5D_CONTIGUOUS: layout = .contiguous
        case H5D_CHUNKED: layout = .chunked
        default: throw FormatError(.unsupported, file: file, tensor: key, "storage layout \(layoutCode.rawValue)")
        }
        let filters = filterNames(creation)
        let chunks = layout == .chunked
            ? try chunkCount(id, creation: creation, key: key, shape: shape, file: file, limits: limits) : 0
        let stored = H5Dget_storage_size(id)
        let storedBytes = stored > hsize_t(Int.max) ? Int.max : Int(stored)
        if filters.isEmpty {
            // Stored as it is: every declared byte must be in the file, or libhdf5 would hand out fill values.
            if declaredBytes > fileSize {
                throw FormatError(.truncated, file: file, tensor: key,
                                  "declares \(declaredBytes) bytes of uncompressed data, the file has \(fileSize)")
            }
            if storedBytes < declaredBytes {
                throw FormatError(.sizeMismatch, file: file, tensor: key,
                                  "declares \(declaredBytes) bytes but only \(storedBytes) are stored (the rest was never written)")
            }
        } else {
            let (ceiling, overflow) = max(storedBytes, 1).multipliedReportingOverflow(by: limits.maximumExpansion)
            if !overflow && declaredBytes > ceiling {
                throw FormatError(.limitExceeded, file: file, tensor: key,
                                  "\(storedBytes) stored bytes (\(filters.joined(separator: "+"))) would inflate to \(declaredBytes), "
                                    + "more than \(limits.maximumExpansion)x: refused, not inflated")
            }
        }
        return HDF5Storage(layout: layout, filters: filters, storedBytes: storedBytes, chunks: chunks)
    }

    /// The chunk grid's size, refused over the limit before libhdf5 walks its index; then every
    /// chunk must have been written.
    private static func chunkCount(_ id: hid_t, creation: hid_t, key: String, shape: [Int], file: String,
                                   limits: HDF5Limits) throws(FormatError) -> Int {
        var chunkDims = [hsize_t](repeating: 0, count: max(shape.count, 1))
        let rank = H5Pget_chunk(creation, Int32(chunkDims.count), &chunkDims)
        guard rank == shape.count, chunkDims.prefix(shape.count).allSatisfy({ $0 > 0 }) else {
            throw FormatError(.corrupt, file: file, tensor: key, "chunk shape of rank \(rank) for a dataset of rank \(shape.count)")
        }
        var grid = 1
        for (extent, chunk) in zip(shape, chunkDims) {
            let across = extent == 0 ? 0 : (UInt64(extent) - 1) / UInt64(chunk) + 1
            let (product, overflow) = grid.multipliedReportingOverflow(by: Int(clamping: across))
            grid = overflow ? Int.max : product
        }
        guard grid <= limits.maximumChunksPerDataset else {
            throw FormatError(.limitExceeded, file: file, tensor: key,
                              "split into \(grid == Int.max ? "more than \(Int.max)" : String(grid)) chunks of "
                                + "\(Shape.text(chunkDims.map { Int(clamping: $0) })); the reader accepts at most \(limits.maximumChunksPerDataset) per dataset")
        }
        var written: hsize_t = 0
        // The whole dataspace as the selection (libhdf5 1.10 does not take H5S_ALL here).
        let space = H5Dget_space(id)
        defer { if space >= 0 { H5Sclose(space) } }
        if grid > 0, space < 0 || H5Dget_num_chunks(id, space, &written) < 0 {
            // libhdf5 1.10 cannot count chunks when no index was ever allocated (nothing is stored),
            // nor in a single-chunk index (a dataset of one chunk: stored when it has storage).
            let stored = H5Dget_storage_size(id)
            guard stored == 0 || grid == 1 else {
                throw FormatError(.corrupt, file: file, tensor: key, "cannot count its stored chunks")
            }
            written = stored == 0 ? 0 : 1
        }
        guard written >= hsize_t(grid) else {
            throw FormatError(.sizeMismatch, file: file, tensor: key,
                              "only \(written) of its \(grid) chunks are stored (the rest was never written)")
        }
        return grid
    }

    private static func filterNames(_ creation: hid_t) -> [String] {
        let count = H5Pget_nfilters(creation)
        guard count > 0 else { return [] }
        return (0..<UInt32(count)).map { index in
            var flags: UInt32 = 0, values = 0, configuration: UInt32 = 0
            var name = [CChar](repeating: 0, count: 64)
            let filter = H5Pget_filter2(creation, index, &flags, &values, nil, name.count, &name, &configuration)
            let text = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return text.isEmpty ? "filter \(filter)" : text
        }
    }

    private static func externalName(_ creation: hid_t) -> String? {
        var name = [CChar](repeating: 0, count: 4096)
        var offset = off_t()
        var size: hsize_t = 0
        guard H5Pget_external(creation, 0, name.count, &name, &offset, &size) >= 0 else { return nil }
        return "'" + TerminalText.escaped(String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) + "'"
    }
}
