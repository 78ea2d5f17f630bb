import CHDF5
import SAMFiles
import SAMTensor

/// An HDF5 file read through libhdf5: every dataset, flat or nested in groups, with its dtype, shape,
/// storage and attributes, listed first; a dataset's bytes are read only when asked for (`tensor`).
/// Calls only unnumbered functions that are stable across 1.10-1.14, the numbered ones (H5Dopen2,
/// H5Aiterate2, H5Aopen ...), or `CHDF5`'s shims where a signature changed between versions.
///
/// The data stays in the file given: external links are never followed (a path through one fails),
/// external storage and virtual datasets are refused while listing. The walk visits each group once
/// however many hard or soft links lead to it (cycles, shared subtrees), and stops at `HDF5Limits`.
public final class HDF5File {
    public let path: String
    /// Every dataset, in sorted path order.
    public private(set) var datasets: [HDF5Dataset] = []
    /// Attributes on the root group (exporters put provenance there, e.g. `source`).
    public private(set) var rootAttributes: [String: String] = [:]
    public let limits: HDF5Limits
    let file: hid_t
    /// Link access for every object opened (and dataset access for datasets): both refuse to traverse external links.
    let linkAccess: hid_t
    let datasetAccess: hid_t
    let fileSize: Int

    /// Largest dataset the reader will allocate for; anything larger is treated as corrupt.
    public static var maximumDatasetBytes: Int { HDF5Limits.default.maximumDatasetBytes }

    public init(path: String, limits: HDF5Limits = .default) throws(FormatError) {
        self.path = path
        self.limits = limits
        HDF5Library.enter(reading: path)
        defer { HDF5Library.leave() }
        _ = H5open()
        shim_H5_silence_errors()
        // Check the file first (a regular file, never waited on) so a missing file is not reported as "not HDF5".
        fileSize = try MappedFile(path: path).count
        let signature = H5Fis_hdf5(path)
        guard signature > 0 else {
            throw FormatError(.corrupt, file: path, "not an HDF5 file (no HDF5 signature)")
        }
        let access = shim_H5_access_within_file(shim_H5P_LINK_ACCESS())
        let datasetAccess = shim_H5_access_within_file(shim_H5P_DATASET_ACCESS())
        guard access >= 0, datasetAccess >= 0 else {
            if access >= 0 { H5Pclose(access) }
            if datasetAccess >= 0 { H5Pclose(datasetAccess) }
            throw FormatError(.unreadable, file: path, "libhdf5 cannot make an access property list")
        }
        let fileAccess = shim_H5_file_access_without_locking()
        let handle = fileAccess < 0 ? fileAccess : H5Fopen(path, shim_H5F_ACC_RDONLY(), fileAccess)
        guard handle >= 0 else {
            let truncated = shim_H5_error_stack_reports_truncation() != 0  // before any other call clears the stack
            if fileAccess >= 0 { H5Pclose(fileAccess) }
            H5Pclose(access)
            H5Pclose(datasetAccess)
            if truncated {
                throw FormatError(.truncated, file: path, "the file ends before the data its superblock declares")
            }
            throw FormatError(.corrupt, file: path, "libhdf5 cannot open it (corrupt)")
        }
        H5Pclose(fileAccess)
        file = handle
        linkAccess = access
        self.datasetAccess = datasetAccess
        let listing = try walkFile()
        datasets = try Self.checkedKeys(listing.datasets, file: path)
        rootAttributes = listing.rootAttributes
    }

    deinit {
        HDF5Library.enter(reading: path)
        defer { HDF5Library.leave() }
        H5Fclose(file)
        H5Pclose(linkAccess)
        H5Pclose(datasetAccess)
    }

    /// The dataset whose state-dict key (dots) or HDF5 path is `name`.
    public func dataset(named name: String) -> HDF5Dataset? {
        if let index = keyIndex[name] { return datasets[index] }
        return datasets.first { $0.path == name || $0.path == "/" + name }
    }

    private lazy var keyIndex: [String: Int] = Dictionary(datasets.enumerated().map { ($0.element.key, $0.offset) },
                                                          uniquingKeysWith: { first, _ in first })

    /// Reads one dataset's elements (the listing has checked its size and storage).
    public func tensor(_ dataset: HDF5Dataset) throws(FormatError) -> Tensor {
        HDF5Library.enter(reading: path)
        defer { HDF5Library.leave() }
        let id = H5Dopen2(file, dataset.path, datasetAccess)
        guard id >= 0 else { throw FormatError(.corrupt, file: path, tensor: dataset.key, "cannot open dataset") }
        defer { H5Dclose(id) }
        let byteCount: Int
        do { byteCount = try Shape.byteCount(dataset.shape, dataset.dtype) } catch {
            throw FormatError(.corrupt, file: path, tensor: dataset.key, "\(error)")
        }
        guard byteCount <= limits.maximumDatasetBytes else {
            throw FormatError(.limitExceeded, file: path, tensor: dataset.key,
                              "declares \(byteCount) bytes, more than the \(limits.maximumDatasetBytes) the reader accepts")
        }
        let memoryType = try Self.memoryType(for: dataset.dtype, dataset: id, file: path, key: dataset.key)
        defer { H5Tclose(memoryType) }
        guard let storage = TensorStorage(zeroedByteCountIfAvailable: byteCount) else {
            throw FormatError(.outOfMemory, file: path, tensor: dataset.key, "cannot allocate \(byteCount) bytes to read it")
        }
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

    /// Every dataset read, by state-dict key.
    public func readAll() throws(FormatError) -> [String: Tensor] {
        var result: [String: Tensor] = [:]
        for dataset in datasets { result[dataset.key] = try tensor(dataset) }
        return result
    }

    /// Two datasets whose paths give one state-dict key (`/a.b` and `/a/b`) are an error naming both.
    static func checkedKeys(_ found: [HDF5Dataset], file: String) throws(FormatError) -> [HDF5Dataset] {
        let sorted = found.sorted { $0.path < $1.path }
        var seen: [String: String] = [:]
        for dataset in sorted {
            if let other = seen.updateValue(dataset.path, forKey: dataset.key) {
                throw FormatError(.duplicateName, file: file, tensor: dataset.key,
                                  "two datasets map to this key: \(TerminalText.escaped(other)) and \(TerminalText.escaped(dataset.path))")
            }
        }
        return sorted
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
