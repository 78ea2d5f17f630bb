import Foundation
import SAMFiles
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

    /// Bytes the referenced storages declare (stored and deflated), and of those the deflated ones'.
    public let storageBytes: Int
    public let deflatedStorageBytes: Int

    private let archive: ZipArchive
    private let index: [String: Int]
    /// Inflated storages while a tensor still holds them (several views share one; a listing that
    /// drops each tensor keeps none), those already counted, and the bytes readings have made.
    private var inflated: [String: WeakStorage] = [:]
    private var counted: Set<String> = []
    /// Entries whose copies are counted: reading one again (a conversion reads each tensor when it
    /// needs it) makes the same bytes, freed in between, so it counts once.
    private var copiesCounted: Set<String> = []
    private var madeBytes = 0
    private let memoryBudget: Int
    private let lock = NSLock()

    /// data.pkl is small (about 100 bytes per tensor); a larger one is refused before it is read.
    static let maximumPickleBytes = 256 << 20

    /// Opens the archive and runs the pickle; no storage is read. Storages that would inflate to more
    /// than `limits` allow over the file's size are refused here, before anything is inflated.
    public init(path: String, limits: PyTorchLimits = .default) throws(FormatError) {
        self.path = path
        let file = try MappedFile(path: path)
        try LegacyCheckpoint.refuse(file.bytes, file: path)
        archive = try ZipArchive(file: file)
        let pickleEntry = try Self.pickleEntry(in: archive)
        archiveName = String(pickleEntry.name.dropLast("/data.pkl".count))
        let pickle = try Self.pickleBytes(pickleEntry, archive: archive, limits: limits)
        var machine = PickleMachine(bytes: pickle.bytes, file: path, entry: pickleEntry.name)
        let root = try machine.run()
        globals = machine.globals.map(\.name)
        let stateDict = try TorchStateDict(root: root, heap: machine.heap, file: path)
        wrapperKey = stateDict.wrapperKey
        ignoredKeys = stateDict.ignoredKeys

        var entries: [PyTorchTensorEntry] = []
        var checkedStorages: Set<String> = []
        var storageBytes = 0, deflatedBytes = 0
        for (key, view) in stateDict.tensors {
            let storage = machine.heap.storages[view.storage]
            let entryName = archiveName + "/data/" + storage.key
            let entry = try PyTorchTensorEntry(key: key, view: view, storage: storage, storageEntry: entryName, file: path)
            if checkedStorages.insert(storage.key).inserted {
                let zipEntry = try Self.checkStorage(storage, entryName: entryName, archive: archive, tensor: key, file: path)
                // Declared sizes are the file's word (ZIP64 allows 2^63): summed with overflow refused.
                let (sum, overflow) = storageBytes.addingReportingOverflow(zipEntry.size)
                guard !overflow else {
                    throw FormatError(.limitExceeded, file: path, tensor: key, "its storages declare more bytes than a machine can address")
                }
                storageBytes = sum
                if zipEntry.method == .deflated { deflatedBytes += zipEntry.size }  // at most storageBytes
            }
            entries.append(entry)
        }
        let (expansionBound, overflow) = file.count.multipliedReportingOverflow(by: limits.maximumExpansion)
        guard overflow || deflatedBytes <= expansionBound + (1 << 20) else {
            throw FormatError(.limitExceeded, file: path,
                              "its deflated storages declare \(deflatedBytes) bytes in a \(file.count)-byte file, more than "
                                + "\(limits.maximumExpansion)x its size (PyTorchLimits.maximumExpansion): a decompression bomb or a lie; nothing was inflated")
        }
        self.entries = entries
        self.storageBytes = storageBytes
        deflatedStorageBytes = deflatedBytes
        let (budget, budgetOverflow) = storageBytes.multipliedReportingOverflow(by: limits.memoryAllowance)
        memoryBudget = budgetOverflow ? Int.max : budget + (1 << 20)
        index = Dictionary(entries.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public var keys: [String] { entries.map(\.key) }

    public func entry(named key: String) -> PyTorchTensorEntry? { index[key].map { entries[$0] } }

    /// One tensor: its storage is inflated on first use (and kept for the other views of it); the
    /// memory a reading makes is counted against the file's budget (`PyTorchLimits.memoryAllowance`).
    /// A contiguous view of a stored (not deflated) storage borrows the mapped file; with
    /// `copyingStoredData` it is copied out and the pages the reading touched are given back, for a
    /// reader that reads every tensor once and must not leave them all resident (a conversion).
    public func tensor(named key: String, copyingStoredData: Bool = false) throws(FormatError) -> Tensor {
        guard let entry = entry(named: key) else {
            throw FormatError(.missingTensor, file: path, tensor: key, "not in the state dict")
        }
        lock.lock()
        defer { lock.unlock() }
        let bytes = try storage(of: entry)
        let firstReading = !copiesCounted.contains(entry.key)
        if firstReading { try spend(entry.copiedBytes, for: entry, "copies of strided or bfloat16 views") }
        let tensor = try entry.tensor(from: bytes, file: path)
        guard copyingStoredData, archive.entry(named: entry.storageEntry)?.method == .stored else {
            copiesCounted.insert(entry.key)
            return tensor
        }
        let owned: Tensor
        if let base = tensor.storage.bytes.baseAddress, bytes.bytes.baseAddress.map({ base >= $0 && base < $0 + bytes.bytes.count }) == true {
            if firstReading { try spend(tensor.byteCount, for: entry, "copies of stored views") }
            guard let copy = TensorStorage(zeroedByteCountIfAvailable: tensor.byteCount) else {
                throw FormatError(.outOfMemory, file: path, tensor: key, "cannot allocate \(tensor.byteCount) bytes to copy it")
            }
            UnsafeMutableRawPointer(mutating: copy.bytes.baseAddress!).copyMemory(from: base, byteCount: tensor.byteCount)
            owned = Tensor(dtype: tensor.dtype, shape: tensor.shape, checkedStorage: copy)
        } else {
            owned = tensor
        }
        copiesCounted.insert(entry.key)
        archive.file.releasePages(of: bytes.bytes)
        return owned
    }

    /// Every tensor, by state-dict key; each storage is inflated at most once.
    public func readAll() throws(FormatError) -> [String: Tensor] {
        var result: [String: Tensor] = [:]
        for entry in entries { result[entry.key] = try tensor(named: entry.key) }
        return result
    }

    /// The bytes of the entry's storage (checked at init to hold exactly its elements): borrowed from
    /// the mapping when stored, inflated once when deflated.
    private func storage(of entry: PyTorchTensorEntry) throws(FormatError) -> TensorStorage {
        if let kept = inflated[entry.storage.key]?.storage { return kept }
        guard let zipEntry = archive.entry(named: entry.storageEntry) else {
            throw FormatError(.corrupt, file: path, tensor: entry.key, "its storage '\(entry.storageEntry)' is not in the archive")
        }
        guard zipEntry.method == .deflated else { return try archive.contents(of: zipEntry) }
        if counted.insert(entry.storage.key).inserted {  // inflated again later, it is the same memory, counted once
            try spend(zipEntry.size, for: entry, "inflated storages")
        }
        let bytes = try archive.contents(of: zipEntry)
        inflated[entry.storage.key] = WeakStorage(bytes)
        return bytes
    }

    private final class WeakStorage {
        weak var storage: TensorStorage?
        init(_ storage: TensorStorage) { self.storage = storage }
    }

    /// Counts `bytes` more made by reading `entry`; past the budget, an error naming what made them.
    private func spend(_ bytes: Int, for entry: PyTorchTensorEntry, _ what: String) throws(FormatError) {
        let (total, overflow) = madeBytes.addingReportingOverflow(bytes)
        guard !overflow, total <= memoryBudget else {
            throw FormatError(.limitExceeded, file: path, tensor: entry.key,
                              "reading it would make \(overflow ? "too many" : String(total)) bytes of \(what) and other copies, more than "
                                + "the \(memoryBudget) its storages' \(storageBytes) bytes allow (PyTorchLimits.memoryAllowance)")
        }
        madeBytes = total
    }

    /// Every global the pickle of `path` names, each marked accepted or refused, found without building
    /// anything a refused one would need: what a listing shows before the open refuses the file. Stops
    /// quietly at the first structural error (the open reports it).
    public static func globalInventory(path: String) throws(FormatError) -> [PickleGlobalName] {
        let file = try MappedFile(path: path)
        try LegacyCheckpoint.refuse(file.bytes, file: path)
        let archive = try ZipArchive(file: file)
        let entry = try pickleEntry(in: archive)
        let pickle = try pickleBytes(entry, archive: archive, limits: .default)
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

    /// The pickle's bytes; a deflated one is held to the file's expansion bound before it is inflated.
    private static func pickleBytes(_ entry: ZipEntry, archive: ZipArchive, limits: PyTorchLimits) throws(FormatError) -> TensorStorage {
        guard entry.size <= maximumPickleBytes else {
            throw FormatError(.unsupported, file: archive.path, "'\(entry.name)' is \(entry.size) bytes, more than a state dict's pickle (\(maximumPickleBytes))")
        }
        let (bound, overflow) = archive.file.count.multipliedReportingOverflow(by: limits.maximumExpansion)
        guard entry.method == .stored || overflow || entry.size <= bound + (1 << 20) else {
            throw FormatError(.limitExceeded, file: archive.path, "'\(entry.name)' declares \(entry.size) bytes deflated in a "
                              + "\(archive.file.count)-byte file, more than \(limits.maximumExpansion)x its size (PyTorchLimits.maximumExpansion)")
        }
        return try archive.contents(of: entry)
    }

    /// The storage's archive entry exists and holds exactly its elements; returns it.
    private static func checkStorage(_ storage: TorchStorageReference, entryName: String, archive: ZipArchive,
                                     tensor: String, file: String) throws(FormatError) -> ZipEntry {
        guard let entry = archive.entry(named: entryName) else {
            throw FormatError(.corrupt, file: file, tensor: tensor, "its storage '\(entryName)' is not in the archive")
        }
        let (expected, overflow) = storage.elementCount.multipliedReportingOverflow(by: storage.elementType.byteSize)
        guard !overflow, entry.size == expected else {
            throw FormatError(.sizeMismatch, file: file, tensor: tensor,
                              "its storage '\(entryName)' holds \(entry.size) bytes, the pickle says \(storage.elementCount) x \(storage.elementType)")
        }
        return entry
    }
}
