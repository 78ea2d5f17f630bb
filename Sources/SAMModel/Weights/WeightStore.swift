import SAMTensor

/// Strict weight loading (mlx-swift style): modules `take` the tensors they need by their
/// PyTorch state-dict path; a missing key or wrong shape throws at once, and `finish()`
/// throws if any supplied tensor was never taken. Keys are canonical state-dict paths.
public final class WeightStore {
    /// Describes where the weights came from, for messages ("mobile_sam.h5").
    public let source: String
    private var tensors: [String: Tensor]
    private var used: Set<String> = []

    public init(_ tensors: [String: Tensor], source: String) {
        self.tensors = tensors
        self.source = source
        // BatchNorm's step counter carries no numeric information in eval mode.
        for key in tensors.keys where key.hasSuffix(".num_batches_tracked") { used.insert(key) }
    }

    public var keys: [String] { tensors.keys.sorted() }
    public func contains(_ key: String) -> Bool { tensors[key] != nil }
    public func shape(of key: String) -> [Int]? { tensors[key]?.shape }

    /// The tensor at `key` as float32, checking its shape when `shape` is given.
    public func take(_ key: String, shape expected: [Int]? = nil) throws(WeightError) -> FloatTensor {
        guard let tensor = tensors[key] else { throw .missing(key: key, source: source) }
        if let expected, expected != tensor.shape {
            throw .shapeMismatch(key: key, expected: expected, actual: tensor.shape, source: source)
        }
        guard tensor.dtype.isFloatingPoint else {
            throw .invalid(key: key, reason: "dtype \(tensor.dtype) is not floating point", source: source)
        }
        used.insert(key)
        return FloatTensor(tensor)
    }

    /// Like `take`, but returns nil when the key is absent (optional biases).
    public func takeIfPresent(_ key: String, shape expected: [Int]? = nil) throws(WeightError) -> FloatTensor? {
        contains(key) ? try take(key, shape: expected) : nil
    }

    /// Throws `.unused` if any supplied tensor was never taken.
    public func finish() throws(WeightError) {
        let unused = tensors.keys.filter { !used.contains($0) }.sorted()
        if !unused.isEmpty { throw .unused(keys: unused, source: source) }
    }

    /// Keys not yet taken (for diagnostics).
    public var unusedKeys: [String] { tensors.keys.filter { !used.contains($0) }.sorted() }
}
