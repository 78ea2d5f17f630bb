import CHDF5
import Foundation
import SAMFormats

/// Writes HDF5 files through libhdf5 for tests: groups, datasets (contiguous, compact or chunked,
/// filtered, unwritten), and every kind of link and foreign storage a reader must refuse. Hostile
/// files that would be large on disk are made here from a few calls instead of being committed.
///
/// libhdf5 may be built without thread safety and tests run in parallel: a builder holds the
/// reader's own lock (`HDF5Library.hold()`) from creation to `close()`.
public final class HDF5Builder {
    // Files are opened without libhdf5's file locks (as the reader opens them): a tool spawned by a
    // parallel test inherits open descriptors (Foundation's Process does not close them) and would
    // hold their locks for as long as it runs.
    /// Runs `body` while no builder is writing.
    public static func withLibrary<T>(_ body: () throws -> T) throws -> T {
        try HDF5Library.serialized { () throws(any Error) -> T in try body() }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let path: String
    private let file: hid_t
    private var closed = false

    /// Creates (truncates) `path`; `latestFormat` uses the newest object formats (dense link
    /// storage, fixed-array chunk indexes), which keeps files of many objects fast to write.
    public convenience init(path: String, latestFormat: Bool = true) throws {
        try self.init(path: path, failure: "cannot create \(path)") { access in
            if latestFormat { H5Pset_libver_bounds(access, shim_H5F_LIBVER_LATEST(), shim_H5F_LIBVER_LATEST()) }
            return H5Fcreate(path, shim_H5F_ACC_TRUNC(), shim_H5P_DEFAULT(), access)
        }
    }

    /// Opens an existing file to add to it.
    public convenience init(appendingTo path: String) throws {
        try self.init(path: path, failure: "cannot open \(path) to add to it") { access in
            H5Fopen(path, shim_H5F_ACC_RDWR(), access)
        }
    }

    /// Holds the library, then opens the file with `open` given a file-access list without locks.
    private init(path: String, failure: String, open: (hid_t) -> hid_t) throws {
        self.path = path
        HDF5Library.hold()
        _ = H5open()
        shim_H5_silence_errors()
        let access = shim_H5_file_access_without_locking()
        defer { H5Pclose(access) }
        file = open(access)
        guard file >= 0 else {
            HDF5Library.release()
            throw Failure(description: failure)
        }
    }

    deinit { close() }

    /// Closes the file, so a tool can read it (also done when the builder goes away).
    public func close() {
        guard !closed else { return }
        closed = true
        H5Fclose(file)
        HDF5Library.release()
    }

    @discardableResult
    public func group(_ path: String) throws -> String {
        let id = H5Gcreate2(file, path, shim_H5P_DEFAULT(), shim_H5P_DEFAULT(), shim_H5P_DEFAULT())
        guard id >= 0 else { throw Failure(description: "cannot create group \(path)") }
        H5Gclose(id)
        return path
    }

    /// Groups `name/name/...` nested `depth` deep under `parent`, one open handle at a time.
    public func nestedGroups(under parent: String = "/", name: String = "g", depth: Int) throws {
        var current = H5Gopen2(file, parent, shim_H5P_DEFAULT())
        for _ in 0..<depth {
            let child = H5Gcreate2(current, name, shim_H5P_DEFAULT(), shim_H5P_DEFAULT(), shim_H5P_DEFAULT())
            H5Gclose(current)
            guard child >= 0 else { throw Failure(description: "cannot nest group \(name)") }
            current = child
        }
        H5Gclose(current)
    }

    public enum Layout {
        case contiguous, compact
        /// Chunks of this shape; `deflate` compresses them; `written: false` leaves them unwritten
        /// (`allocateEarly` allocates every chunk at creation, filled, without a write per chunk).
        case chunked([Int], deflate: Bool = false, allocateEarly: Bool = false)
        /// One deflate chunk holding the whole shape, written directly as `stored` bytes: a file that
        /// declares far more data than its compressed bytes could ever inflate to.
        case precompressedChunk(stored: [UInt8])
        /// Contiguous bytes kept in another file at `offset`, `size` bytes (HDF5 external storage).
        case external(file: String, offset: Int, size: Int)
    }

    /// A float32 dataset (uint8 for `.external`); `values` written when given (else left unwritten).
    public func dataset(_ path: String, shape: [Int], layout: Layout = .contiguous, values: [Float]? = nil) throws {
        var dims = shape.map { hsize_t($0) }
        let space = shape.isEmpty ? H5Screate(H5S_SCALAR) : H5Screate_simple(Int32(shape.count), &dims, nil)
        defer { H5Sclose(space) }
        let creation = H5Pcreate(shim_H5P_DATASET_CREATE())
        defer { H5Pclose(creation) }
        var type = shim_H5T_NATIVE_FLOAT()
        switch layout {
        case .contiguous: break
        case .compact: H5Pset_layout(creation, H5D_COMPACT)
        case .chunked(let chunk, let deflate, let early):
            var chunkDims = chunk.map { hsize_t($0) }
            H5Pset_chunk(creation, Int32(chunk.count), &chunkDims)
            if deflate { H5Pset_deflate(creation, 6) }
            if early { H5Pset_alloc_time(creation, H5D_ALLOC_TIME_EARLY) }
        case .precompressedChunk:
            H5Pset_chunk(creation, Int32(shape.count), &dims)
            H5Pset_deflate(creation, 6)
        case .external(let name, let offset, let size):
            H5Pset_external(creation, name, off_t(offset), hsize_t(size))
            type = shim_H5T_NATIVE_UINT8()
        }
        let id = H5Dcreate2(file, path, type, space, shim_H5P_DEFAULT(), creation, shim_H5P_DEFAULT())
        guard id >= 0 else { throw Failure(description: "cannot create dataset \(path)") }
        defer { H5Dclose(id) }
        if case .precompressedChunk(let stored) = layout {
            let origin = [hsize_t](repeating: 0, count: shape.count)
            guard H5Dwrite_chunk(id, shim_H5P_DEFAULT(), 0, origin, stored.count, stored) >= 0 else {
                throw Failure(description: "cannot write the chunk of \(path)")
            }
        } else if let values {
            guard H5Dwrite(id, type, shim_H5S_ALL(), shim_H5S_ALL(), shim_H5P_DEFAULT(), values) >= 0 else {
                throw Failure(description: "cannot write \(path)")
            }
        }
    }

    /// Scalar float32 datasets `prefix000000`, `prefix000001`, ... (compact: no data block each).
    public func scalarDatasets(count: Int, in group: String = "/", prefix: String = "d") throws {
        let parent = H5Gopen2(file, group, shim_H5P_DEFAULT())
        defer { H5Gclose(parent) }
        let space = H5Screate(H5S_SCALAR)
        defer { H5Sclose(space) }
        let creation = H5Pcreate(shim_H5P_DATASET_CREATE())
        defer { H5Pclose(creation) }
        H5Pset_layout(creation, H5D_COMPACT)
        var value: Float = 1
        for index in 0..<count {
            let name = prefix + String(format: "%06d", index)
            let id = H5Dcreate2(parent, name, shim_H5T_NATIVE_FLOAT(), space, shim_H5P_DEFAULT(), creation, shim_H5P_DEFAULT())
            guard id >= 0 else { throw Failure(description: "cannot create dataset \(name)") }
            H5Dwrite(id, shim_H5T_NATIVE_FLOAT(), shim_H5S_ALL(), shim_H5S_ALL(), shim_H5P_DEFAULT(), &value)
            H5Dclose(id)
        }
    }

    /// Writes `values` over the float32 elements of the existing dataset `path`.
    public func rewrite(_ path: String, values: [Float]) throws {
        let id = H5Dopen2(file, path, shim_H5P_DEFAULT())
        guard id >= 0 else { throw Failure(description: "no dataset \(path)") }
        defer { H5Dclose(id) }
        guard H5Dwrite(id, shim_H5T_NATIVE_FLOAT(), shim_H5S_ALL(), shim_H5S_ALL(), shim_H5P_DEFAULT(), values) >= 0 else {
            throw Failure(description: "cannot write \(path)")
        }
    }

    /// A second (hard) link `newPath` to the object at `target`: the same object under two names.
    public func hardLink(_ target: String, at newPath: String) throws {
        guard H5Lcreate_hard(file, target, file, newPath, shim_H5P_DEFAULT(), shim_H5P_DEFAULT()) >= 0 else {
            throw Failure(description: "cannot link \(newPath) to \(target)")
        }
    }

    public func softLink(_ target: String, at newPath: String) throws {
        guard H5Lcreate_soft(target, file, newPath, shim_H5P_DEFAULT(), shim_H5P_DEFAULT()) >= 0 else {
            throw Failure(description: "cannot soft-link \(newPath) to \(target)")
        }
    }

    /// A link to `object` in the file `otherFile` (relative names resolve against this file's folder).
    public func externalLink(to otherFile: String, object: String, at newPath: String) throws {
        guard H5Lcreate_external(otherFile, object, file, newPath, shim_H5P_DEFAULT(), shim_H5P_DEFAULT()) >= 0 else {
            throw Failure(description: "cannot create external link \(newPath)")
        }
    }

    /// A virtual float32 dataset whose every element maps to `sourceDataset` in `sourceFile`.
    public func virtualDataset(_ path: String, shape: [Int], sourceFile: String, sourceDataset: String) throws {
        var dims = shape.map { hsize_t($0) }
        let space = H5Screate_simple(Int32(shape.count), &dims, nil)
        defer { H5Sclose(space) }
        let sourceSpace = H5Screate_simple(Int32(shape.count), &dims, nil)
        defer { H5Sclose(sourceSpace) }
        let creation = H5Pcreate(shim_H5P_DATASET_CREATE())
        defer { H5Pclose(creation) }
        H5Sselect_all(space)
        H5Sselect_all(sourceSpace)
        guard H5Pset_virtual(creation, space, sourceFile, sourceDataset, sourceSpace) >= 0 else {
            throw Failure(description: "cannot map \(path)")
        }
        let id = H5Dcreate2(file, path, shim_H5T_NATIVE_FLOAT(), space, shim_H5P_DEFAULT(), creation, shim_H5P_DEFAULT())
        guard id >= 0 else { throw Failure(description: "cannot create virtual dataset \(path)") }
        H5Dclose(id)
    }
}
