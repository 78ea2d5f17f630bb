import CHDF5
import SAMTensor

/// An HDF5 file read through libhdf5: every dataset, flat or nested in groups, with its dtype, shape
/// and attributes. Calls only unnumbered functions that are stable across 1.10-1.14, or the numbered
/// ones (H5Dopen2, H5Aiterate2, H5Aopen ...), never the version-switched macros.
public final class HDF5File {
    public let path: String
    /// Every dataset, in sorted path order.
    public private(set) var datasets: [HDF5Dataset] = []
    private let file: hid_t
    private let fileSize: Int

    /// Largest dataset the reader will allocate for; anything larger is treated as corrupt.
    static let maximumDatasetBytes = 16 << 30

    public init(path: String) throws(FormatError) {
        self.path = path
        _ = H5open()
        shim_H5_silence_errors()
        // Check the file first so a missing file is not reported as "not HDF5".
        fileSize = try MappedFile(path: path).count
        let signature = H5Fis_hdf5(path)
        guard signature > 0 else {
            throw FormatError(.corrupt, file: path, "not an HDF5 file (no HDF5 signature)")
        }
        let handle = H5Fopen(path, shim_H5F_ACC_RDONLY(), shim_H5P_DEFAULT())
        guard handle >= 0 else {
            if shim_H5_error_stack_reports_truncation() != 0 {
                throw FormatError(.truncated, file: path, "the file ends before the data its superblock declares")
            }
            throw FormatError(.corrupt, file: path, "libhdf5 cannot open it (corrupt)")
        }
        file = handle
        var found: [HDF5Dataset] = []
        try collectDatasets(in: "/", into: &found)
        datasets = found.sorted { $0.path < $1.path }
        rootAttributes = Self.readRootAttributes(of: handle)
    }

    /// Attributes on the root group (exporters put provenance there, e.g. `source`).
    public private(set) var rootAttributes: [String: String] = [:]

    private static func readRootAttributes(of file: hid_t) -> [String: String] {
        let root = H5Gopen2(file, "/", shim_H5P_DEFAULT())
        guard root >= 0 else { return [:] }
        defer { H5Gclose(root) }
        return HDF5Attributes.read(of: root)
    }

    deinit { H5Fclose(file) }

    /// The dataset whose state-dict key (dots) or HDF5 path is `name`.
    public func dataset(named name: String) -> HDF5Dataset? {
        datasets.first { $0.key == name || $0.path == name || $0.path == "/" + name }
    }

    /// Reads one dataset's elements.
    public func tensor(_ dataset: HDF5Dataset) throws(FormatError) -> Tensor {
        let id = H5Dopen2(file, dataset.path, shim_H5P_DEFAULT())
        guard id >= 0 else { throw FormatError(.corrupt, file: path, tensor: dataset.key, "cannot open dataset") }
        defer { H5Dclose(id) }
        let byteCount: Int
        do { byteCount = try Shape.byteCount(dataset.shape, dataset.dtype) } catch {
            throw FormatError(.corrupt, file: path, tensor: dataset.key, "\(error)")
        }
        guard byteCount <= Self.maximumDatasetBytes else {
            throw FormatError(.corrupt, file: path, tensor: dataset.key, "declares \(byteCount) bytes, more than the reader accepts")
        }
        // Uncompressed data is stored whole in the file: a dataset larger than the file is corrupt,
        // and is refused before the buffer is allocated.
        let creation = H5Dget_create_plist(id)
        let filters = creation >= 0 ? H5Pget_nfilters(creation) : 0
        if creation >= 0 { H5Pclose(creation) }
        if filters == 0 && byteCount > fileSize {
            throw FormatError(.truncated, file: path, tensor: dataset.key,
                              "declares \(byteCount) bytes of uncompressed data, the file has \(fileSize)")
        }
        let memoryType = try Self.memoryType(for: dataset.dtype, dataset: id, file: path, key: dataset.key)
        defer { H5Tclose(memoryType) }
        let storage = TensorStorage(zeroedByteCount: byteCount)
        if byteCount > 0 {
            let status = H5Dread(id, memoryType, shim_H5S_ALL(), shim_H5S_ALL(), shim_H5P_DEFAULT(),
                                 UnsafeMutableRawPointer(mutating: storage.bytes.baseAddress!))
            guard status >= 0 else {
                throw FormatError(.truncated, file: path, tensor: dataset.key, "libhdf5 cannot read its data (truncated or corrupt file)")
            }
        }
        return Tensor(dtype: dataset.dtype, shape: dataset.shape, checkedStorage: storage)
    }

    /// Reads the dataset with state-dict key or path `name`.
    public func tensor(named name: String) throws(FormatError) -> Tensor {
        guard let dataset = dataset(named: name) else {
            throw FormatError(.missingTensor, file: path, tensor: name, "no such dataset")
        }
        return try tensor(dataset)
    }

    /// Every dataset read, by state-dict key. Two datasets mapping to one key is an error.
    public func readAll() throws(FormatError) -> [String: Tensor] {
        var result: [String: Tensor] = [:]
        for dataset in datasets {
            if result[dataset.key] != nil {
                throw FormatError(.corrupt, file: path, tensor: dataset.key, "two datasets map to this key (flat and nested)")
            }
            result[dataset.key] = try tensor(dataset)
        }
        return result
    }

    // MARK: - Walking the groups

    private func collectDatasets(in groupPath: String, into found: inout [HDF5Dataset]) throws(FormatError) {
        let group = H5Gopen2(file, groupPath, shim_H5P_DEFAULT())
        guard group >= 0 else { throw FormatError(.corrupt, file: path, "cannot open group \(groupPath)") }
        defer { H5Gclose(group) }
        var info = H5G_info_t()
        guard H5Gget_info(group, &info) >= 0 else { throw FormatError(.corrupt, file: path, "cannot list group \(groupPath)") }
        for index in 0..<info.nlinks {
            let name = try linkName(group: group, index: index, groupPath: groupPath)
            let childPath = groupPath == "/" ? "/" + name : groupPath + "/" + name
            let object = H5Oopen(group, name, shim_H5P_DEFAULT())
            guard object >= 0 else {
                throw FormatError(.corrupt, file: path, tensor: HDF5Dataset.key(forPath: childPath), "cannot open object (dangling link or corrupt file)")
            }
            defer { H5Oclose(object) }
            switch H5Iget_type(object) {
            case H5I_GROUP: try collectDatasets(in: childPath, into: &found)
            case H5I_DATASET: found.append(try describeDataset(object, path: childPath))
            default: continue  // named datatypes carry no tensor
            }
        }
    }

    private func linkName(group: hid_t, index: hsize_t, groupPath: String) throws(FormatError) -> String {
        let length = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, index, nil, 0, shim_H5P_DEFAULT())
        guard length >= 0 else { throw FormatError(.corrupt, file: path, "cannot read link \(index) of \(groupPath)") }
        var buffer = [CChar](repeating: 0, count: Int(length) + 1)
        _ = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, index, &buffer, buffer.count, shim_H5P_DEFAULT())
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func describeDataset(_ id: hid_t, path datasetPath: String) throws(FormatError) -> HDF5Dataset {
        let key = HDF5Dataset.key(forPath: datasetPath)
        let space = H5Dget_space(id)
        guard space >= 0 else { throw FormatError(.corrupt, file: path, tensor: key, "no dataspace") }
        defer { H5Sclose(space) }
        let rank = H5Sget_simple_extent_ndims(space)
        guard rank >= 0, rank <= 32 else { throw FormatError(.corrupt, file: path, tensor: key, "dataspace rank \(rank)") }
        var dims = [hsize_t](repeating: 0, count: Int(rank))
        if rank > 0 { H5Sget_simple_extent_dims(space, &dims, nil) }
        let shape = dims.map { $0 > hsize_t(Int.max) ? -1 : Int($0) }
        let type = H5Dget_type(id)
        guard type >= 0 else { throw FormatError(.corrupt, file: path, tensor: key, "no datatype") }
        defer { H5Tclose(type) }
        let dtype = try Self.dtype(of: type, file: path, key: key)
        if shape.contains(-1) { throw FormatError(.corrupt, file: path, tensor: key, "dimension too large") }
        return HDF5Dataset(path: datasetPath, key: key, dtype: dtype, shape: shape,
                           attributes: HDF5Attributes.read(of: id))
    }

    // MARK: - Types

    /// Maps an HDF5 file type to the reader's dtype (h5py writes bool as an 8-bit enum).
    static func dtype(of type: hid_t, file: String, key: String) throws(FormatError) -> DType {
        let size = H5Tget_size(type)
        switch H5Tget_class(type) {
        case H5T_FLOAT:
            switch size {
            case 2: return .float16
            case 4: return .float32
            case 8: return .float64
            default: break
            }
        case H5T_INTEGER:
            let signed = H5Tget_sign(type) == H5T_SGN_2
            switch (signed, size) {
            case (false, 1): return .uint8
            case (true, 1), (true, 2), (false, 2), (true, 4): return .int32
            case (true, 8): return .int64
            default: break
            }
        case H5T_ENUM where size == 1:
            return .bool
        default: break
        }
        throw FormatError(.unsupported, file: file, tensor: key,
                          "HDF5 datatype (class \(H5Tget_class(type).rawValue), \(size) bytes) is not one of f16 f32 f64 i64 i32 u8 bool")
    }

    /// The in-memory type to read `dtype` into: native types let libhdf5 convert byte order and widths;
    /// half precision (no native type in 1.10) is read as the file's own type forced to little-endian.
    static func memoryType(for dtype: DType, dataset: hid_t, file: String, key: String) throws(FormatError) -> hid_t {
        let native: hid_t
        switch dtype {
        case .float32: native = shim_H5T_NATIVE_FLOAT()
        case .float64: native = shim_H5T_NATIVE_DOUBLE()
        case .int64: native = shim_H5T_NATIVE_INT64()
        case .int32: native = shim_H5T_NATIVE_INT32()
        case .int8: native = shim_H5T_NATIVE_INT8()
        case .uint8: native = shim_H5T_NATIVE_UINT8()
        case .bool:
            // Enum values are read as their raw 8-bit integers (h5py: FALSE = 0, TRUE = 1).
            let fileType = H5Dget_type(dataset)
            defer { H5Tclose(fileType) }
            return H5Tcopy(fileType)
        case .float16:
            let fileType = H5Dget_type(dataset)
            defer { H5Tclose(fileType) }
            let copy = H5Tcopy(fileType)
            guard copy >= 0, H5Tset_order(copy, H5T_ORDER_LE) >= 0 else {
                throw FormatError(.unsupported, file: file, tensor: key, "cannot read half-precision data")
            }
            return copy
        }
        return H5Tcopy(native)
    }
}
