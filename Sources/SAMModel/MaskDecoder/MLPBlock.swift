import SAMKernels
import SAMTensor

/// common.py `MLPBlock`: lin1 → activation → lin2. The two-way transformer builds it with ReLU
/// (`TwoWayTransformer(activation=nn.ReLU)`), not the class's GELU default.
public struct MLPBlock: Sendable {
    public enum Activation: Sendable { case relu, gelu }

    public let path: String
    public let lin1: NN.Linear
    public let lin2: NN.Linear
    public let activation: Activation

    /// The hidden width `mlpDim` is read from `lin1.weight` when nil.
    /// ref: common.py MLPBlock.__init__
    public init(weights: WeightStore, path: String, embeddingDim: Int, mlpDim: Int?, activation: Activation) throws(WeightError) {
        self.path = path
        lin1 = try NN.Linear(weights: weights, path: "\(path).lin1", inFeatures: embeddingDim, outFeatures: mlpDim)
        lin2 = try NN.Linear(weights: weights, path: "\(path).lin2", inFeatures: lin1.outFeatures, outFeatures: embeddingDim)
        self.activation = activation
    }

    /// ref: common.py MLPBlock.forward — self.lin2(self.act(self.lin1(x)))
    public func callAsFunction(_ x: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
        var hidden = lin1(x, observer: observer)
        switch activation {
        case .relu: Kernels.relu(&hidden)
        case .gelu: Kernels.gelu(&hidden)
        }
        observer?("\(path).act", hidden)
        let out = lin2(hidden, observer: observer)
        observer?(path, out)
        return out
    }
}
