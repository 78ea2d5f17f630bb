import SAMTensor

/// A PyTorch checkpoint as `torch.save` writes it since torch 1.6, read without Python: a zip holding
/// `<archive>/data.pkl` (a pickle of the state dict) and one `<archive>/data/<key>` entry per storage.
///
/// The pickle runs on `PickleMachine`, which accepts only the globals a state dict needs and refuses
/// any other (`os.system` ...) when it is named, so opening a hostile file never runs code. Tensors are
/// views into storages (several may share one); a contiguous view of a stored (uncompressed) entry
/// borrows the mapped file, a strided one is copied in C order, a deflated storage is inflated.
/// bfloat16 tensors are widened to float32 (exact). The state dict is the top-level dict, or the
/// dict under its "model" or "state_dict" key; its non-tensor values are listed in `ignoredKeys`.
public final class PyTorchCheckpoint: @unchecked Sendable {
    public let path: String
    /// The folder every entry of the zip sits under (torch.save names it after the file).
    public let archiveName: String
    /// The state dict's tensors, in its order.
    public let entries: [PyTorchTensorEntry]
    /// The top-level key holding the state dict ("model", "state_dict"), nil when it is the top level.
    public let wrapperKey: String?
    /// State-dict keys whose values are not tensors, left out.
    public let ignoredKeys: [String]
    /// Every global the pickle names, in order (all accepted ones: a refused one stops the open).
    public let globals: [String]

    private let archive: ZipArchive
    private let index: [String: Int]

    /// data.pkl is small (about 100 bytes per tensor); a larger one is refused before it is read.
    static let maximumPickleBytes = 256 << 20
    /// A reading may copy (strided views, bfloat16 widening) at most this many times the storages' bytes.
    static let copyAllowance = 4

    public init(path: String) throws(FormatError) {
        self.path = path
        let file = try MappedFile(path: path)
        try LegacyCheckpoint.refuse(file.bytes, file: path)
        archive = try ZipArchive(file: file)
        let pickleEntry = try Self.pickleEntry(in: archive)
        archiveName = String(pickleEntry.name.dropLast("/data.pkl".count))
        let pickle = try Self.pickleBytes(pickleEntry, archive: archive)
        var machine = PickleMachine(bytes: pickle.bytes, file: path, entry: pickleEntry.name)
        let root = try machine.run()
        globals = machine.globals.map(\.name)
        let stateDict = try TorchStateDict(root: root, heap: machine.heap, file: path)
        wrapperKey = stateDict.wrapperKey
        ignoredKeys = stateDict.ignoredKeys

        var entries: [PyTorchTensorEntry] = []
        var checkedStorages: Set<String> = []
        for (key, view) in stateDict.tensors {
            let storage = machine.heap.storages[view.storage]
            let entryName = archiveName + "/data/" + storage.key
            let entry = try PyTorchTensorEntry(key: key, view: view, storage: storage, storageEntry: entryName, file: path)
            if checkedStorages.insert(storage.key).inserted {
                try Self.checkStorage(storage, entryName: entryName, archive: archive, tensor: key, file: path)
            }
            entries.append(entry)
        }
        self.entries = entries
        index = Dictionary(entries.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public var keys: [String] { entries.map(\.key) }

    public func entry(named key: String) -> PyTorchTensorEntry? { index[key].map { entries[$0] } }

    /// One tensor (its storage is inflated for it alone when deflated).
    public func tensor(named key: String) throws(FormatError) -> Tensor {
        guard let entry = entry(named: key) else {
            throw FormatError(.missingTensor, file: path, tensor: key, "not in the state dict")
        }
        return entry.tensor(from: try storageBytes(entry))
    }

    /// Every tensor, by state-dict key; each storage is inflated at most once.
    public func readAll() throws(FormatError) -> [String: Tensor] {
        var storages: [String: TensorStorage] = [:]
        var storageBytes = 0
        for entry in entries where storages[entry.storage.key] == nil {
            let bytes = try self.storageBytes(entry)
            storages[entry.storage.key] = bytes
            storageBytes += bytes.bytes.count
        }
        var copied = 0
        var result: [String: Tensor] = [:]
        for entry in entries {
            copied += entry.copiedBytes
            guard copied <= Self.copyAllowance * storageBytes + (1 << 20) else {
                throw FormatError(.corrupt, file: path, tensor: entry.key,
                                  "views that need more than \(Self.copyAllowance)x the storages' \(storageBytes) bytes in copies")
            }
            guard let bytes = storages[entry.storage.key] else { continue }  // every entry's storage was read above
            result[entry.key] = entry.tensor(from: bytes)
        }
        return result
    }

    /// Every global the pickle of `path` names, each marked accepted or refused, found without building
    /// anything a refused one would need: what a listing shows before the open refuses the file. Stops
    /// quietly at the first structural error (the open reports it).
    public static func globalInventory(path: String) throws(FormatError) -> [PickleGlobalName] {
        let file = try MappedFile(path: path)
        try LegacyCheckpoint.refuse(file.bytes, file: path)
        let archive = try ZipArchive(file: file)
        let entry = try pickleEntry(in: archive)
        let pickle = try pickleBytes(entry, archive: archive)
        var machine = PickleMachine(bytes: pickle.bytes, file: path, entry: entry.name, mode: .inventory)
        _ = try? machine.run()
        return machine.globals
    }

    // MARK: - Archive layout

    /// The one `<archive>/data.pkl` entry.
    private static func pickleEntry(in archive: ZipArchive) throws(FormatError) -> ZipEntry {
        let candidates = archive.entries.filter { $0.name.hasSuffix("/data.pkl") && $0.name.filter { $0 == "/" }.count == 1 }
        guard candidates.count == 1 else {
            throw FormatError(.corrupt, file: archive.path, candidates.isEmpty
                              ? "a zip without <archive>/data.pkl: not a torch.save checkpoint"
                              : "\(candidates.count) data.pkl entries (\(candidates.map(\.name).joined(separator: ", ")))")
        }
        return candidates[0]
    }

    private static func pickleBytes(_ entry: ZipEntry, archive: ZipArchive) throws(FormatError) -> TensorStorage {
        guard entry.size <= maximumPickleBytes else {
            throw FormatError(.unsupported, file: archive.path, "'\(entry.name)' is \(entry.size) bytes, more than a state dict's pickle (\(maximumPickleBytes))")
        }
        return try archive.contents(of: entry)
    }

    /// The storage's archive entry exists and holds exactly its elements.
    private static func checkStorage(_ storage: TorchStorageReference, entryName: String, archive: ZipArchive,
                                     tensor: String, file: String) throws(FormatError) {
        guard let entry = archive.entry(named: entryName) else {
            throw FormatError(.corrupt, file: file, tensor: tensor, "its storage '\(entryName)' is not in the archive")
        }
        let (expected, overflow) = storage.elementCount.multipliedReportingOverflow(by: storage.elementType.byteSize)
        guard !overflow, entry.size == expected else {
            throw FormatError(.sizeMismatch, file: file, tensor: tensor,
                              "its storage '\(entryName)' holds \(entry.size) bytes, the pickle says \(storage.elementCount) x \(storage.elementType)")
        }
    }

    /// The bytes of the entry's storage (checked at init to hold exactly its elements).
    private func storageBytes(_ entry: PyTorchTensorEntry) throws(FormatError) -> TensorStorage {
        guard let zipEntry = archive.entry(named: entry.storageEntry) else {
            throw FormatError(.corrupt, file: path, tensor: entry.key, "its storage '\(entry.storageEntry)' is not in the archive")
        }
        return try archive.contents(of: zipEntry)
    }
}
