/// A read-only float32 weight a kernel multiplies by: a `FloatTensor` (tests, weights derived at
/// load), or a `WeightTensor` (used in place from a mapped model file, or widened from float16
/// while a kernel uses it). Kernels see its elements only inside `withFloats`.
package protocol WeightOperand: Sendable {
    var shape: [Int] { get }
    /// Calls `body` with all elements as contiguous float32, C order; the pointer is valid only
    /// inside `body`.
    func withFloats<R>(_ body: (UnsafeBufferPointer<Float>) throws -> R) rethrows -> R

    /// A form of this weight that a kernel computes from its elements (`make`), kept under `form`
    /// for later calls where the operand can keep it (`WeightTensor`); other operands compute it
    /// on every call.
    func derived<Form: Sendable>(_ form: String, _ make: () -> Form) -> Form
}

extension WeightOperand {
    package func derived<Form: Sendable>(_ form: String, _ make: () -> Form) -> Form { make() }
}

extension FloatTensor: WeightOperand {
    package func withFloats<R>(_ body: (UnsafeBufferPointer<Float>) throws -> R) rethrows -> R {
        try data.withUnsafeBufferPointer(body)
    }
}
