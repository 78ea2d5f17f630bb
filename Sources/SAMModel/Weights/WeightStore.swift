import SAMTensor
import Synchronization

/// Strict weight loading (mlx-swift style): modules `take` the tensors they need by their
/// PyTorch state-dict path; a missing key or wrong shape throws at once, and `finish()`
/// throws if any supplied tensor was never taken. Keys are canonical state-dict paths.
/// Modules may be built from one store on several threads at once (`Sam` builds its
/// components in parallel): the tensors are only read, and the record of taken keys is locked.
public final class WeightStore: Sendable {
    /// Describes where the weights came from, for messages ("mobile_sam.h5").
    public let source: String
    private let tensors: [String: Tensor]
    private let used: Mutex<Set<String>>

    public init(_ tensors: [String: Tensor], source: String) {
        self.tensors = tensors
        self.source = source
        // BatchNorm's step counter carries no numeric information in eval mode.
        used = Mutex(Set(tensors.keys.filter { $0.hasSuffix(".num_batches_tracked") }))
    }

    public var keys: [String] { tensors.keys.sorted() }
    public func contains(_ key: String) -> Bool { tensors[key] != nil }
    public func shape(of key: String) -> [Int]? { tensors[key]?.shape }

    /// The tensor at `key` as float32, checking its shape when `shape` is given.
    public func take(_ key: String, shape expected: [Int]? = nil) throws(WeightError) -> FloatTensor {
        FloatTensor(try stored(key, shape: expected))
    }

    /// The stored tensor at `key`, checked (present, shape, floating point) and marked as taken.
    private func stored(_ key: String, shape expected: [Int]?) throws(WeightError) -> Tensor {
        guard let tensor = tensors[key] else { throw .missing(key: key, source: source) }
        if let expected, expected != tensor.shape {
            throw .shapeMismatch(key: key, expected: expected, actual: tensor.shape, source: source)
        }
        guard tensor.dtype.isFloatingPoint else {
            throw .invalid(key: key, reason: "dtype \(tensor.dtype) is not floating point", source: source)
        }
        _ = used.withLock { $0.insert(key) }
        return tensor
    }

    /// The tensor at `key` for a kernel to multiply by, used in place (see `WeightTensor`): a
    /// large matrix is never copied at load.
    public func takeWeight(_ key: String, shape expected: [Int]? = nil) throws(WeightError) -> WeightTensor {
        let tensor = try stored(key, shape: expected)
        return WeightTensor(tensor)
    }

    /// Like `take`, but returns nil when the key is absent (optional biases).
    public func takeIfPresent(_ key: String, shape expected: [Int]? = nil) throws(WeightError) -> FloatTensor? {
        contains(key) ? try take(key, shape: expected) : nil
    }

    /// Throws `.unused` if any supplied tensor was never taken.
    public func finish() throws(WeightError) {
        let unused = unusedKeys
        if !unused.isEmpty { throw .unused(keys: unused, source: source) }
    }

    /// Keys not yet taken (for diagnostics).
    public var unusedKeys: [String] {
        used.withLock { used in tensors.keys.filter { !used.contains($0) }.sorted() }
    }
}
