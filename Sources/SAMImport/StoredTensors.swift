import SAMFiles
import SAMFormats
import SAMTensor

/// The tensors one state-dict file stores, listed by key with dtype and shape before any is read:
/// the import reads a tensor's bytes only when its key maps to a weight, so a large dataset the
/// model does not use costs nothing.
public struct StoredTensors: Sendable {
    public struct Entry: Sendable, Equatable {
        public let dtype: DType
        public let shape: [Int]

        public init(dtype: DType, shape: [Int]) {
            self.dtype = dtype
            self.shape = shape
        }

        /// A float tensor that can hold weights (at least two elements).
        var isWeightLike: Bool { dtype.isFloatingPoint && ((try? Shape.elementCount(shape)) ?? 2) >= 2 }
    }

    public let entries: [String: Entry]
    /// Readers are safe to call from any thread (libhdf5 behind its one lock, the checkpoint's own lock, mapped files).
    private let reader: @Sendable (String) throws(FormatError) -> Tensor

    public init(entries: [String: Entry], read: @escaping @Sendable (String) throws(FormatError) -> Tensor) {
        self.entries = entries
        reader = read
    }

    /// Tensors already in memory (or mapped): reading is a lookup.
    public init(_ tensors: [String: Tensor]) {
        entries = tensors.mapValues { Entry(dtype: $0.dtype, shape: $0.shape) }
        reader = { (key: String) throws(FormatError) -> Tensor in tensors[key]! }
    }

    /// An HDF5 file's datasets, read on demand.
    public init(_ file: HDF5File) {
        entries = Dictionary(file.datasets.map { ($0.key, Entry(dtype: $0.dtype, shape: $0.shape)) }, uniquingKeysWith: { first, _ in first })
        let file = UncheckedSendable(file)
        reader = { (key: String) throws(FormatError) -> Tensor in try file.value.tensor(named: key) }
    }

    /// A PyTorch checkpoint's tensors, read (and their storages inflated) on demand; stored ones copied out of the mapping.
    public init(_ checkpoint: PyTorchCheckpoint) {
        entries = Dictionary(checkpoint.entries.map { ($0.key, Entry(dtype: $0.dtype, shape: $0.shape)) },
                             uniquingKeysWith: { first, _ in first })
        reader = { (key: String) throws(FormatError) -> Tensor in try checkpoint.tensor(named: key, copyingStoredData: true) }
    }

    /// A safetensors file's tensors, read on demand (borrowing the mapped file; bfloat16 widened).
    public init(_ file: SafetensorsFile) {
        entries = Dictionary(file.entries.map { ($0.name, Entry(dtype: $0.elementType.dtype, shape: $0.shape)) },
                             uniquingKeysWith: { first, _ in first })
        reader = { (key: String) throws(FormatError) -> Tensor in try file.tensor(named: key) }
    }

    public var keys: [String] { entries.keys.sorted() }

    public func read(_ key: String) throws(FormatError) -> Tensor { try reader(key) }
}

/// An `HDF5File` handed to other threads: its reads go through libhdf5's one lock.
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
