import SAMKernels
import SAMTensor

extension NN {
    /// `nn.LayerNorm` over the last dimension (weight and bias [dim]).
    package struct LayerNorm: Sendable {
        package let path: String
        package let weight: FloatTensor
        package let bias: FloatTensor
        package let eps: Float

        /// `eps` defaults to nn.LayerNorm's 1e-5 (SAM's transformer keeps the default).
        package init(weights: WeightStore, path: String, dim: Int, eps: Float = 1e-5) throws(WeightError) {
            self.path = path
            weight = try weights.take("\(path).weight", shape: [dim])
            bias = try weights.take("\(path).bias", shape: [dim])
            self.eps = eps
        }

        /// ref: torch.nn.LayerNorm.forward
        package func callAsFunction(_ x: inout FloatTensor, observer: ModuleObserver? = nil) {
            Kernels.layerNorm(&x, weight: weight, bias: bias, eps: eps)
            observer?(path, x)
        }

        /// The same, returning also the normalised x + `addend` (made in the same pass).
        package func callAsFunction(_ x: inout FloatTensor, returningSumWith addend: FloatTensor,
                                   observer: ModuleObserver? = nil) -> FloatTensor {
            let sum = Kernels.layerNorm(&x, weight: weight, bias: bias, eps: eps, returningSumWith: addend)
            observer?(path, x)
            return sum
        }

        /// The same, into a new tensor, for an input that is still needed (no copy first).
        package func normalized(_ x: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
            let y = Kernels.layerNormed(x, weight: weight, bias: bias, eps: eps)
            observer?(path, y)
            return y
        }
    }

    /// SAM's `LayerNorm2d` (common.py): normalises the channels of every pixel of an NCHW tensor.
    package struct LayerNorm2d: Sendable {
        package let path: String
        package let weight: FloatTensor
        package let bias: FloatTensor
        package let eps: Float

        /// `eps` defaults to LayerNorm2d's 1e-6 (not nn.LayerNorm's 1e-5).
        package init(weights: WeightStore, path: String, channels: Int, eps: Float = 1e-6) throws(WeightError) {
            self.path = path
            weight = try weights.take("\(path).weight", shape: [channels])
            bias = try weights.take("\(path).bias", shape: [channels])
            self.eps = eps
        }

        /// ref: common.py LayerNorm2d.forward
        package func callAsFunction(_ x: inout FloatTensor, observer: ModuleObserver? = nil) {
            Kernels.layerNorm2d(&x, weight: weight, bias: bias, eps: eps)
            observer?(path, x)
        }
    }
}
