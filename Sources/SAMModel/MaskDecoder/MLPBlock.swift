import SAMKernels
import SAMTensor

/// common.py `MLPBlock`: lin1 → activation → lin2. The two-way transformer builds it with ReLU
/// (`TwoWayTransformer(activation=nn.ReLU)`), not the class's GELU default. SAM 2's transformer
/// builds sam2_utils.py `MLP(d, mlp_dim, d, num_layers=2)` instead: the same computation with the
/// layers named `layers.0` and `layers.1`.
package struct MLPBlock: Sendable {
    package enum Activation: Sendable { case relu, gelu }

    /// The two layers' names under the block's path: SAM's `lin1`/`lin2`, SAM 2's `layers.0`/`layers.1`,
    /// or a family's own.
    package struct Naming: Sendable, Equatable {
        package let first: String, second: String

        package init(first: String, second: String) {
            self.first = first
            self.second = second
        }

        package static let sam = Naming(first: "lin1", second: "lin2")
        package static let sam2 = Naming(first: "layers.0", second: "layers.1")
    }

    package let path: String
    package let lin1: NN.Linear
    package let lin2: NN.Linear
    package let activation: Activation

    /// The hidden width `mlpDim` is read from `lin1.weight` when nil.
    /// ref: common.py MLPBlock.__init__
    package init(weights: WeightStore, path: String, embeddingDim: Int, mlpDim: Int?, activation: Activation,
                naming: Naming = .sam) throws(WeightError) {
        self.path = path
        lin1 = try NN.Linear(weights: weights, path: "\(path).\(naming.first)", inFeatures: embeddingDim, outFeatures: mlpDim)
        lin2 = try NN.Linear(weights: weights, path: "\(path).\(naming.second)", inFeatures: lin1.outFeatures, outFeatures: embeddingDim)
        self.activation = activation
    }

    /// ref: common.py MLPBlock.forward — self.lin2(self.act(self.lin1(x)))
    package func callAsFunction(_ x: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
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
