import SAMTensor

extension Kernels {
    /// What a producing kernel (linear, convolution) applies to its output while the output is
    /// still in cache, instead of a separate pass over memory: first `residual` is added (a
    /// tensor of the output's shape), then `activation`.
    package struct Epilogue: Sendable {
        package enum Activation: Sendable {
            case none, gelu, relu
            /// GELU's tanh approximation (EfficientViT's encoder).
            case geluTanh
        }

        package var residual: FloatTensor?
        package var activation: Activation

        package init(residual: FloatTensor? = nil, activation: Activation = .none) {
            self.residual = residual
            self.activation = activation
        }

        package static let none = Epilogue()
        package static let gelu = Epilogue(activation: .gelu)
        package static let relu = Epilogue(activation: .relu)
        package static let geluTanh = Epilogue(activation: .geluTanh)

        var isIdentity: Bool { residual == nil && activation == .none }

        /// Checks the residual against the producing kernel's output shape.
        func check(outputShape: [Int], _ kernel: String) {
            if let residual {
                precondition(residual.shape == outputShape,
                             "\(kernel): residual \(residual.shape) does not match the output \(outputShape)")
            }
        }
    }

    /// Applies `epilogue` to `count` outputs at `output`; `residual` points at the residual's
    /// matching elements (nil when the epilogue has none).
    @inline(__always)
    static func applyEpilogue(_ activation: Epilogue.Activation, _ output: UnsafeMutablePointer<Float>, count: Int,
                              residual: UnsafePointer<Float>?) {
        if let residual { addInPlace(output, residual, count: count) }
        switch activation {
        case .none: break
        case .gelu: geluInPlace(output, count: count)
        case .geluTanh: geluTanhInPlace(output, count: count)
        case .relu:
            var i = 0
            let zero = SIMD8<Float>(repeating: 0)
            while i + 8 <= count {
                let v = output.load8(at: i)
                output.store8(v.replacing(with: zero, where: v .< zero), at: i)
                i += 8
            }
            while i < count { output[i] = max(output[i], 0); i += 1 }
        }
    }

    /// Runs `body` with the epilogue's residual as a pointer (nil without one).
    static func withResidual<R>(_ epilogue: Epilogue, _ body: (UnsafePointer<Float>?) -> R) -> R {
        guard let residual = epilogue.residual else { return body(nil) }
        return residual.data.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    /// Applies `epilogue` to the whole of `x`, in parallel: the fallback for shapes where a
    /// kernel cannot apply it tile by tile.
    package static func applyEpilogue(_ epilogue: Epilogue, to x: inout FloatTensor) {
        guard !epilogue.isIdentity, x.count > 0 else { return }
        let count = x.count
        withResidual(epilogue) { residual in
            x.data.withUnsafeMutableBufferPointer { buffer in
                let base = buffer.baseAddress!
                parallelRanges(count) { range in
                    applyEpilogue(epilogue.activation, base + range.lowerBound, count: range.count,
                                  residual: residual.map { $0 + range.lowerBound })
                }
            }
        }
    }
}
