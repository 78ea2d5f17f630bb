#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SAMFiles
import SAMTensor

/// The side files an ONNX model keeps large tensors in, mapped once each on first use.
/// Locations are checked as the ONNX external-data spec requires: relative to the model's folder,
/// no absolute paths, no `..`, and no link that leads outside the folder.
final class ExternalDataFiles: @unchecked Sendable {
    let modelPath: String
    let folder: String
    private var mapped: [String: MappedFile] = [:]
    private let lock = NSLockLite()

    init(modelPath: String) {
        self.modelPath = modelPath
        if let slash = modelPath.lastIndex(of: "/") {
            folder = slash == modelPath.startIndex ? "/" : String(modelPath[..<slash])
        } else {
            folder = "."
        }
    }

    /// The bytes `offset ..< offset+length` of `location`, and the object that keeps them mapped.
    func bytes(location: String, offset: Int, length: Int, tensor: String) throws(FormatError) -> (UnsafeRawBufferPointer, AnyObject) {
        let file = try mappedFile(location, tensor: tensor)
        let (end, overflow) = offset.addingReportingOverflow(length)
        guard !overflow, end <= file.count else {
            throw FormatError(.truncated, file: file.path, tensor: tensor,
                              "external data \(offset)..<\(overflow ? Int.max : end) runs past the end of the file (\(file.count) bytes)")
        }
        return (try file.slice(offset: offset, length: length, tensor: tensor), file)
    }

    /// A copy of the bytes `offset ..< offset+length` of `location`, whose mapped pages are given back
    /// at once: a model's weights are read one tensor at a time without staying resident.
    func copy(location: String, offset: Int, length: Int, tensor: String) throws(FormatError) -> TensorStorage {
        let (bytes, file) = try bytes(location: location, offset: offset, length: length, tensor: tensor)
        guard let storage = TensorStorage(zeroedByteCountIfAvailable: length) else {
            throw FormatError(.outOfMemory, file: modelPath, tensor: tensor, "cannot allocate \(length) bytes for its external data")
        }
        if length > 0 { UnsafeMutableRawPointer(mutating: storage.bytes.baseAddress!).copyMemory(from: bytes.baseAddress!, byteCount: length) }
        (file as? MappedFile)?.releasePages(of: bytes)
        return storage
    }

    /// `folder/location` of every file mapped so far (each passed `safePath`), sorted.
    var pathsRead: [String] {
        lock.lock()
        defer { lock.unlock() }
        return mapped.keys.sorted().map { folder == "." ? $0 : folder + "/" + $0 }
    }

    private func mappedFile(_ location: String, tensor: String) throws(FormatError) -> MappedFile {
        lock.lock()
        defer { lock.unlock() }
        if let file = mapped[location] { return file }
        let resolved = try safePath(location, tensor: tensor)
        let file: MappedFile
        do { file = try MappedFile(path: resolved) } catch {
            // Named as the model's: the message says which model and tensor pulled the file in.
            throw FormatError(error.code, file: modelPath, tensor: tensor, "external data \(resolved): \(error.message)")
        }
        mapped[location] = file
        return file
    }

    /// ref: onnx/external_data_helper.py and the spec's "location ... relative to the model file; must not escape".
    func safePath(_ location: String, tensor: String) throws(FormatError) -> String {
        if location.hasPrefix("/") || location.hasPrefix("\\") {
            throw FormatError(.unsafePath, file: modelPath, tensor: tensor, "external data location '\(location)' is absolute")
        }
        let components = location.split(whereSeparator: { $0 == "/" || $0 == "\\" })
        if components.contains("..") {
            throw FormatError(.unsafePath, file: modelPath, tensor: tensor, "external data location '\(location)' contains '..'")
        }
        let candidate = folder + "/" + location
        guard let realFolder = realPath(folder) else {
            throw FormatError(.unreadable, file: modelPath, tensor: tensor, "cannot resolve the model's folder")
        }
        guard let realCandidate = realPath(candidate) else {
            throw FormatError(.unreadable, file: candidate, tensor: tensor, "external data file '\(location)' not found next to the model")
        }
        let prefix = realFolder.hasSuffix("/") ? realFolder : realFolder + "/"
        guard realCandidate.hasPrefix(prefix) else {
            throw FormatError(.unsafePath, file: modelPath, tensor: tensor,
                              "external data location '\(location)' leads outside the model's folder (to \(realCandidate))")
        }
        return realCandidate
    }

    private func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// A pthread mutex, so the formats target does not need Foundation for one lock.
final class NSLockLite: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }
    func lock() { pthread_mutex_lock(&mutex) }
    func unlock() { pthread_mutex_unlock(&mutex) }
}
