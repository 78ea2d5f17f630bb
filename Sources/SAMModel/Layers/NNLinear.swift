import SAMKernels
import SAMTensor

extension NN {
    /// `nn.Linear`: y = x Wᵀ + b over the last dimension; weight [out, in], bias [out].
    package struct Linear: Sendable {
        package let path: String
        package let weight: WeightTensor
        package let bias: FloatTensor

        package var inFeatures: Int { weight.shape[1] }
        package var outFeatures: Int { weight.shape[0] }

        /// Loads `path.weight` and `path.bias`; a nil width is read from the weight's shape.
        package init(weights: WeightStore, path: String, inFeatures: Int?, outFeatures: Int?) throws(WeightError) {
            self.path = path
            weight = try NN.takeWeight("\(path).weight", shape: [outFeatures, inFeatures], from: weights)
            bias = try weights.take("\(path).bias", shape: [weight.shape[0]])
        }

        /// ref: torch.nn.Linear.forward, then `epilogue` (the residual add / activation that
        /// follows upstream), fused unless an observer wants the output before it.
        package func callAsFunction(_ x: FloatTensor, then epilogue: Kernels.Epilogue = .none,
                                   observer: ModuleObserver? = nil) -> FloatTensor {
            guard let observer else { return Kernels.linear(x, weight: weight, bias: bias, epilogue: epilogue) }
            var y = Kernels.linear(x, weight: weight, bias: bias)
            observer(path, y)
            Kernels.applyEpilogue(epilogue, to: &y)
            return y
        }

        /// residual + self(activation(first(x))) as one pass in tiles of int8 products, the hidden map
        /// kept in cache (`Kernels.int8MLP`: the same bits as the two layers apart), when both weights
        /// are stored int8, int8 products are on and no observer wants the hidden map; nil otherwise,
        /// and the caller runs the two layers.
        package func int8MLP(_ x: FloatTensor, after first: Linear, activation: Kernels.Epilogue.Activation,
                             plus residual: FloatTensor?, observer: ModuleObserver?) -> FloatTensor? {
            guard observer == nil else { return nil }
            return Kernels.int8MLP(x, first: first.weight, firstBias: first.bias, activation: activation,
                                   second: weight, secondBias: bias, epilogue: Kernels.Epilogue(residual: residual))
        }
    }
}
