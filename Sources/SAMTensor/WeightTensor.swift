import Synchronization

/// A weight matrix or filter as the runtime holds it after loading: float32 bytes used where they
/// are (a mapped `.samw`, a reader's buffer), or float16 bytes widened to float32 each time a
/// kernel uses them, so a model stored in f16 stays half the size in memory.
///
/// Loading a model therefore copies none of its large weights; the operating system reads each
/// page of the mapped file when a kernel first touches it.
package struct WeightTensor: WeightOperand {
    private enum Elements: Sendable {
        case float32(TensorStorage)
        case float16(TensorStorage)
        case quantized(QuantizedWeight)
    }

    package let shape: [Int]
    private let elements: Elements
    /// Forms kernels derived from the elements (bfloat16 panels), shared by copies of this value.
    private let derivedForms = DerivedForms()

    /// Uses `tensor`'s bytes in place when they are float32 (4-byte aligned) or float16;
    /// other element types, and misaligned float32, are converted to an owned float32 copy.
    package init(_ tensor: Tensor) {
        shape = tensor.shape
        let base = Int(bitPattern: tensor.storage.bytes.baseAddress)
        switch tensor.dtype {
        case .float32 where base % MemoryLayout<Float>.alignment == 0:
            elements = .float32(tensor.storage)
        case .float16:
            elements = .float16(tensor.storage)
        default:
            elements = .float32(tensor.floats().withUnsafeBytes { TensorStorage(copying: $0) })
        }
    }

    /// A quantized weight used in place: int8 products read its codes (`Kernels.linear`), every
    /// other use widens it to float32 for the call, as float16.
    package init(_ weight: QuantizedWeight) {
        shape = weight.shape
        elements = .quantized(weight)
    }

    /// An owned copy of `floats` (weights computed at load, tests).
    package init(_ floats: FloatTensor) {
        shape = floats.shape
        elements = .float32(floats.data.withUnsafeBytes { TensorStorage(copying: $0) })
    }

    package var count: Int { shape.reduce(1, *) }

    /// True when the elements are stored as float16 and widened on use.
    package var isStoredAsHalf: Bool {
        if case .float16 = elements { return true }
        return false
    }

    /// The quantized weight, when stored so.
    package var quantized: QuantizedWeight? {
        if case .quantized(let weight) = elements { return weight }
        return nil
    }

    /// float32 elements in place, or (float16 or quantized storage) a temporary widened copy that
    /// lives only for the call: one layer's weights at a time, never the whole model.
    package func withFloats<R>(_ body: (UnsafeBufferPointer<Float>) throws -> R) rethrows -> R {
        switch elements {
        case .float32(let storage):
            let floats = storage.bytes.isEmpty
                ? UnsafeBufferPointer<Float>(start: nil, count: 0)
                : UnsafeBufferPointer(start: storage.bytes.baseAddress!.assumingMemoryBound(to: Float.self), count: count)
            return try body(floats)
        case .float16(let storage):
            let widened = UnsafeMutableBufferPointer<Float>.allocate(capacity: count)
            defer { widened.deallocate() }
            Half.widen(storage.bytes, into: widened)
            return try body(UnsafeBufferPointer(widened))
        case .quantized(let weight):
            let widened = UnsafeMutableBufferPointer<Float>.allocate(capacity: count)
            defer { widened.deallocate() }
            weight.dequantize(into: widened)
            return try body(UnsafeBufferPointer(widened))
        }
    }

    package func derived<Form: Sendable>(_ form: String, _ make: () -> Form) -> Form {
        derivedForms.value(form, make)
    }

    /// An owned float32 copy, for code that needs a `FloatTensor`.
    package func floatTensor() -> FloatTensor {
        withFloats { FloatTensor(shape: shape, data: Array($0)) }
    }
}

/// A weight's derived forms, each made once: concurrent first uses wait for the one that makes it.
private final class DerivedForms: Sendable {
    private let forms = Mutex<[String: any Sendable]>([:])

    func value<Form: Sendable>(_ form: String, _ make: () -> Form) -> Form {
        forms.withLock { forms in
            if let kept = forms[form] as? Form { return kept }
            let made = make()
            forms[form] = made
            return made
        }
    }
}
