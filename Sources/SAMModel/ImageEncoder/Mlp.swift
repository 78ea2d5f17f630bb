import SAMKernels
import SAMTensor

extension TinyViT {
    /// tiny_vit_sam.py Mlp: LayerNorm, fc1, GELU, fc2 (dropout is the identity at inference).
    package struct Mlp: Sendable {
        package static let key = "mlp"
        package let path: String
        package let norm: NN.LayerNorm
        package let fc1: NN.Linear
        package let fc2: NN.Linear

        package var hiddenDim: Int { fc1.outFeatures }

        init(weights: WeightStore, path: String, dim: Int) throws(WeightError) {
            self.path = path
            norm = try NN.LayerNorm(weights: weights, path: "\(path).norm", dim: dim)
            fc1 = try NN.Linear(weights: weights, path: "\(path).fc1", inFeatures: dim, outFeatures: nil)
            fc2 = try NN.Linear(weights: weights, path: "\(path).fc2", inFeatures: fc1.outFeatures, outFeatures: dim)
        }

        /// [..., dim] -> [..., dim]; with `residual`, returns residual + mlp(x) (the block's
        /// skip connection, fused into fc2 unless an observer wants mlp(x) itself).
        // ref: tiny_vit_sam.py Mlp.forward (L201-209)
        package func callAsFunction(_ x: FloatTensor, plusResidual residual: FloatTensor? = nil,
                                   observer: ModuleObserver? = nil) -> FloatTensor {
            let normed = norm.normalized(x, observer: observer)
            if let y = fc2.int8MLP(normed, after: fc1, activation: .gelu, plus: residual, observer: observer) { return y }
            let h = fc1(normed, then: .gelu, observer: observer)
            observer?("\(path).act", h)
            guard let observer else { return fc2(h, then: Kernels.Epilogue(residual: residual)) }
            var y = fc2(h, observer: observer)
            observer(path, y)
            if let residual { Kernels.add(&y, residual) }
            return y
        }
    }
}
