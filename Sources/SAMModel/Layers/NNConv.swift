import SAMKernels
import SAMTensor

extension NN {
    /// `nn.Conv2d` without groups: weight [out, in, kh, kw], bias [out].
    public struct Conv2d: Sendable {
        public let path: String
        public let weight: FloatTensor
        public let bias: FloatTensor
        public let stride: Int
        /// Zeros added on every side (nn.Conv2d's `padding`).
        public let padding: Int

        public var inChannels: Int { weight.shape[1] }
        public var outChannels: Int { weight.shape[0] }

        /// Loads `path.weight` [out, in, kernel, kernel] and `path.bias` [out]; nil widths come from the weight.
        public init(weights: WeightStore, path: String, inChannels: Int?, outChannels: Int?,
                    kernel: Int, stride: Int, padding: Int = 0) throws(WeightError) {
            self.path = path
            weight = try NN.take("\(path).weight", shape: [outChannels, inChannels, kernel, kernel], from: weights)
            bias = try weights.take("\(path).bias", shape: [weight.shape[0]])
            self.stride = stride
            self.padding = padding
        }

        /// ref: torch.nn.Conv2d.forward (zero padding)
        public func callAsFunction(_ x: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
            let y = Kernels.conv2d(x, weight: weight, bias: bias, stride: stride, padding: padding)
            observer?(path, y)
            return y
        }
    }

    /// `nn.ConvTranspose2d` with kernel == stride (no overlap, no padding): weight [in, out, kh, kw], bias [out].
    public struct ConvTranspose2d: Sendable {
        public let path: String
        public let weight: FloatTensor
        public let bias: FloatTensor
        public let stride: Int

        public var inChannels: Int { weight.shape[0] }
        public var outChannels: Int { weight.shape[1] }

        /// Loads `path.weight` [in, out, kernel, kernel] and `path.bias` [out]; nil widths come from the weight.
        public init(weights: WeightStore, path: String, inChannels: Int?, outChannels: Int?,
                    kernel: Int, stride: Int) throws(WeightError) {
            self.path = path
            weight = try NN.take("\(path).weight", shape: [inChannels, outChannels, kernel, kernel], from: weights)
            bias = try weights.take("\(path).bias", shape: [weight.shape[1]])
            self.stride = stride
        }

        /// ref: torch.nn.ConvTranspose2d.forward, then `epilogue` (the activation that follows
        /// upstream), fused unless an observer wants the output before it.
        public func callAsFunction(_ x: FloatTensor, then epilogue: Kernels.Epilogue = .none,
                                   observer: ModuleObserver? = nil) -> FloatTensor {
            guard let observer else { return Kernels.convTranspose2d(x, weight: weight, bias: bias, stride: stride, epilogue: epilogue) }
            var y = Kernels.convTranspose2d(x, weight: weight, bias: bias, stride: stride)
            observer(path, y)
            Kernels.applyEpilogue(epilogue, to: &y)
            return y
        }
    }
}
