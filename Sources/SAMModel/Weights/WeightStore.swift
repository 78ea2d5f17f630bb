import SAMTensor
import Synchronization

/// Strict weight loading (mlx-swift style): modules `take` the tensors they need by their
/// PyTorch state-dict path; a missing key or wrong shape throws at once, and `finish()`
/// throws if any supplied tensor was never taken. Keys are canonical state-dict paths.
/// Modules may be built from one store on several threads at once (`Sam` builds its
/// components in parallel): the tensors are only read, and the record of taken keys is locked.
package final class WeightStore: Sendable {
    /// Describes where the weights came from, for messages ("mobile_sam.h5").
    package let source: String
    private let tensors: [String: Tensor]
    /// Weights stored quantized (`.samw` files written with `--dtype int8|q4`).
    private let quantized: [String: QuantizedWeight]
    private let used: Mutex<Set<String>>
    private let matrices: Mutex<Set<String>>

    /// `quantized` holds weights stored as `QuantizedWeight`s; a key is in one dictionary or the
    /// other, never both.
    package init(_ tensors: [String: Tensor], quantized: [String: QuantizedWeight] = [:], source: String) {
        precondition(Set(tensors.keys).isDisjoint(with: quantized.keys), "a weight is both plain and quantized")
        self.tensors = tensors
        self.quantized = quantized
        self.source = source
        matrices = Mutex([])
        // BatchNorm's step counter carries no numeric information in eval mode.
        used = Mutex(Set(tensors.keys.filter { $0.hasSuffix(".num_batches_tracked") }))
    }

    package var keys: [String] { (Array(tensors.keys) + Array(quantized.keys)).sorted() }
    package func contains(_ key: String) -> Bool { tensors[key] != nil || quantized[key] != nil }
    package func shape(of key: String) -> [Int]? { tensors[key]?.shape ?? quantized[key]?.shape }

    /// The tensor at `key` as float32, checking its shape when `shape` is given (a quantized weight
    /// dequantized).
    package func take(_ key: String, shape expected: [Int]? = nil) throws(WeightError) -> FloatTensor {
        if let weight = try storedQuantized(key, shape: expected) { return FloatTensor(shape: weight.shape, data: weight.floats()) }
        return FloatTensor(try stored(key, shape: expected))
    }

    /// The quantized weight at `key`, checked and marked as taken; nil when `key` is not quantized.
    private func storedQuantized(_ key: String, shape expected: [Int]?) throws(WeightError) -> QuantizedWeight? {
        guard let weight = quantized[key] else { return nil }
        if let expected, expected != weight.shape {
            throw .shapeMismatch(key: key, expected: expected, actual: weight.shape, source: source)
        }
        _ = used.withLock { $0.insert(key) }
        return weight
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
    package func takeWeight(_ key: String, shape expected: [Int]? = nil) throws(WeightError) -> WeightTensor {
        let weight: WeightTensor
        if let stored = try storedQuantized(key, shape: expected) {
            weight = WeightTensor(stored)
        } else {
            weight = WeightTensor(try stored(key, shape: expected))
        }
        _ = matrices.withLock { $0.insert(key) }
        return weight
    }

    /// The keys taken by `takeWeight` or named by `noteMatrix`: the matrices the model multiplies by
    /// (linear layers, pointwise convolutions), which `samconvert --dtype int8|q4` quantizes.
    package var matrixKeys: Set<String> { matrices.withLock { $0 } }

    /// Records `key` (taken with `take`) as a matrix the model multiplies by, for `matrixKeys`.
    package func noteMatrix(_ key: String) {
        _ = matrices.withLock { $0.insert(key) }
    }

    /// The int8 codes and scales stored at `key` (`samconvert --dtype int8`), nil when the weight is
    /// stored otherwise. Marks nothing: the caller takes the weight with `take` too.
    package func int8Codes(_ key: String) -> QuantizedWeight? {
        quantized[key].flatMap { $0.scheme == .int8 ? $0 : nil }
    }

    /// Like `take`, but returns nil when the key is absent (optional biases).
    package func takeIfPresent(_ key: String, shape expected: [Int]? = nil) throws(WeightError) -> FloatTensor? {
        contains(key) ? try take(key, shape: expected) : nil
    }

    /// Throws `.unused` if any supplied tensor was never taken.
    package func finish() throws(WeightError) {
        let unused = unusedKeys
        if !unused.isEmpty { throw .unused(keys: unused, source: source) }
    }

    /// Keys not yet taken (for diagnostics).
    package var unusedKeys: [String] {
        used.withLock { used in keys.filter { !used.contains($0) } }
    }
}
