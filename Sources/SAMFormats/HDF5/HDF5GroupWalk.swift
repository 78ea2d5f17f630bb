#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CHDF5
import SAMFiles
import SAMTensor

/// Listing an HDF5 file: a walk from the root that opens each group once (however many links lead
/// to it), refuses links leaving the file, stops at the depth and object limits, and describes each
/// dataset (type, shape, storage) without reading its data.
extension HDF5File {
    struct Listing {
        var datasets: [HDF5Dataset] = []
        var rootAttributes: [String: String] = [:]
    }

    /// An object's identity within the open file, as libhdf5 reports it.
    struct ObjectKey: Hashable {
        let fileNumber: UInt
        let first: UInt64
        let second: UInt64
    }

    private struct Walk {
        var listing = Listing()
        var visitedGroups: Set<ObjectKey> = []
        var objects = 0
    }

    func walkFile() throws(FormatError) -> Listing {
        let root = H5Gopen2(file, "/", shim_H5P_DEFAULT())
        guard root >= 0 else { throw FormatError(.corrupt, file: path, "cannot open the root group") }
        defer { H5Gclose(root) }
        var walk = Walk()
        let (key, _, _) = try identity(of: root, at: "/")
        walk.visitedGroups.insert(key)
        walk.listing.rootAttributes = HDF5Attributes.read(of: root, limit: limits.maximumAttributesPerObject)
        try walkGroup(root, path: "/", depth: 0, into: &walk)
        return walk.listing
    }

    private func walkGroup(_ group: hid_t, path groupPath: String, depth: Int, into walk: inout Walk) throws(FormatError) {
        var info = H5G_info_t()
        guard H5Gget_info(group, &info) >= 0 else { throw FormatError(.corrupt, file: path, "cannot list group \(printable(groupPath))") }
        // Counted before the group is read, so a group of a million links is refused at once.
        let (total, overflow) = walk.objects.addingReportingOverflow(Int(clamping: info.nlinks))
        guard !overflow, total <= limits.maximumObjects else {
            throw FormatError(.limitExceeded, file: path,
                              "group \(printable(groupPath)) brings the objects listed to \(overflow ? "more than \(Int.max)" : String(total)); "
                                + "the reader accepts at most \(limits.maximumObjects) per file")
        }
        walk.objects = total
        for link in try links(of: group, path: groupPath) {
            let childPath = groupPath == "/" ? "/" + link.name : groupPath + "/" + link.name
            switch link.type {
            case 0, 1: break  // hard; soft (a path inside this file)
            case 64:
                throw FormatError(.unsafePath, file: path, tensor: HDF5Dataset.key(forPath: childPath),
                                  "\(printable(childPath)) is an external link (to another file); refused: data must be stored in the file given")
            default:
                throw FormatError(.unsupported, file: path, tensor: HDF5Dataset.key(forPath: childPath),
                                  "\(printable(childPath)) is a user-defined link (type \(link.type)); only links inside the file are followed")
            }
            let object = H5Oopen(group, link.name, linkAccess)
            guard object >= 0 else {
                throw FormatError(.corrupt, file: path, tensor: HDF5Dataset.key(forPath: childPath),
                                  "cannot open object (dangling link, a soft link through an external link, or corrupt file)")
            }
            defer { H5Oclose(object) }
            let (key, type, attributes) = try identity(of: object, at: childPath)
            switch type {
            case H5O_TYPE_GROUP.rawValue:
                // A cycle or a second path to a shared subtree: its contents are listed once, under the first path.
                guard walk.visitedGroups.insert(key).inserted else { continue }
                guard depth + 1 <= limits.maximumGroupDepth else {
                    throw FormatError(.limitExceeded, file: path,
                                      "groups nest deeper than \(limits.maximumGroupDepth) levels (at \(printable(String(childPath.prefix(200))))...); "
                                        + "the reader accepts at most \(limits.maximumGroupDepth)")
                }
                try walkGroup(object, path: childPath, depth: depth + 1, into: &walk)
            case H5O_TYPE_DATASET.rawValue:
                walk.listing.datasets.append(try describeDataset(object, path: childPath, attributeCount: attributes))
            default:
                continue  // named datatypes carry no tensor
            }
        }
    }

    /// The links of `group` in one pass: names and link types.
    private func links(of group: hid_t, path groupPath: String) throws(FormatError) -> [(name: String, type: Int32)] {
        final class Found { var links: [(name: String, type: Int32)] = [] }
        let found = Found()
        let status = withExtendedLifetime(found) {
            shim_H5_iterate_links(group, { name, type, context in
                guard let name, let context else { return -1 }
                let bytes = UnsafeRawBufferPointer(start: name, count: strlen(name))
                Unmanaged<Found>.fromOpaque(context).takeUnretainedValue().links.append((String(decoding: bytes, as: UTF8.self), type))
                return 0
            }, Unmanaged.passUnretained(found).toOpaque())
        }
        guard status >= 0 else { throw FormatError(.corrupt, file: path, "cannot read the links of group \(printable(groupPath))") }
        return found.links
    }

    private func identity(of object: hid_t, at objectPath: String) throws(FormatError) -> (ObjectKey, Int32, Int) {
        var fileNumber: UInt = 0
        var key: [UInt64] = [0, 0]
        var type: Int32 = -1
        var attributes: UInt64 = 0
        guard shim_H5_object_identity(object, &fileNumber, &key, &type, &attributes) >= 0 else {
            throw FormatError(.corrupt, file: path, tensor: HDF5Dataset.key(forPath: objectPath), "cannot read the object's header")
        }
        return (ObjectKey(fileNumber: fileNumber, first: key[0], second: key[1]), type, Int(clamping: attributes))
    }

    private func describeDataset(_ id: hid_t, path datasetPath: String, attributeCount: Int) throws(FormatError) -> HDF5Dataset {
        let key = HDF5Dataset.key(forPath: datasetPath)
        let space = H5Dget_space(id)
        guard space >= 0 else { throw FormatError(.corrupt, file: path, tensor: key, "no dataspace") }
        defer { H5Sclose(space) }
        let rank = H5Sget_simple_extent_ndims(space)
        guard rank >= 0, rank <= 32 else { throw FormatError(.corrupt, file: path, tensor: key, "dataspace rank \(rank)") }
        var dims = [hsize_t](repeating: 0, count: Int(rank))
        if rank > 0 { H5Sget_simple_extent_dims(space, &dims, nil) }
        guard dims.allSatisfy({ $0 <= hsize_t(Int.max) }) else { throw FormatError(.corrupt, file: path, tensor: key, "dimension too large") }
        let shape = dims.map { Int($0) }
        let type = H5Dget_type(id)
        guard type >= 0 else { throw FormatError(.corrupt, file: path, tensor: key, "no datatype") }
        defer { H5Tclose(type) }
        let dtype = try Self.dtype(of: type, file: path, key: key)
        // Sizes in the file's own element type (an int16 dataset is read widened, stored narrow).
        let declared: Int, inMemory: Int
        do {
            declared = try Shape.elementCount(shape).multipliedReportingOverflowOrThrow(by: H5Tget_size(type))
            inMemory = try Shape.byteCount(shape, dtype)
        } catch {
            throw FormatError(.corrupt, file: path, tensor: key, "shape \(Shape.text(shape)) overflows")
        }
        guard inMemory <= limits.maximumDatasetBytes else {
            throw FormatError(.limitExceeded, file: path, tensor: key,
                              "declares \(inMemory) bytes, more than the \(limits.maximumDatasetBytes) the reader accepts")
        }
        let storage = try HDF5Storage.inspect(id, key: key, declaredBytes: declared, shape: shape, file: path,
                                              fileSize: fileSize, limits: limits)
        let attributes = attributeCount > 0 ? HDF5Attributes.read(of: id, limit: limits.maximumAttributesPerObject) : [:]
        return HDF5Dataset(path: datasetPath, key: key, dtype: dtype, shape: shape, attributes: attributes, storage: storage)
    }

    func printable(_ text: String) -> String { TerminalText.escaped(text) }
}

private struct ShapeOverflow: Error {}

extension Int {
    fileprivate func multipliedReportingOverflowOrThrow(by other: Int) throws -> Int {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        if overflow { throw ShapeOverflow() }
        return product
    }
}
