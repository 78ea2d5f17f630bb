import Synchronization
import SAMTensor

/// A tensor derived from weights (not stored in the file), computed on first use and kept for the
/// model's lifetime: TinyViT's expanded attention biases, the prompt encoder's dense positional
/// encoding. A load then costs only what it reads; an app that never runs the encoder (cached
/// embeddings) or never decodes does not pay for the other side's tables. Concurrent first uses
/// wait for one computation.
package final class DerivedTensor: Sendable {
    private let cached = Mutex<FloatTensor?>(nil)
    private let compute: @Sendable () -> FloatTensor

    package init(_ compute: @escaping @Sendable () -> FloatTensor) {
        self.compute = compute
    }

    /// An already computed tensor (a supplied one), kept as it is.
    package init(value: FloatTensor) {
        cached.withLock { $0 = value }
        compute = { value }
    }

    package var value: FloatTensor {
        cached.withLock { cached in
            if let cached { return cached }
            let value = compute()
            cached = value
            return value
        }
    }
}
