import SAMKernels
import SAMTensor

/// sam2_utils.py `MLP`: Linear layers `layers.0 ... layers.(n-1)` with the activation module `act`
/// after each but the last, and an optional sigmoid at the end. Hiera's blocks build it with GELU,
/// the SAM 2 mask decoder (transformer MLPs, hypernetworks, IoU and object-score heads) with ReLU.
/// Observers see `layers.i`, then `act` after every hidden layer (one module called n - 1 times:
/// calls 0, 1, ...), then the MLP's own path (after the sigmoid).
package struct SAM2MLP: Sendable {
    package enum Activation: Sendable { case relu, gelu }

    package let path: String
    package let layers: [NN.Linear]
    package let activation: Activation
    package let sigmoidOutput: Bool

    package var inputDim: Int { layers[0].inFeatures }
    package var hiddenDim: Int { layers[0].outFeatures }
    package var outputDim: Int { layers[layers.count - 1].outFeatures }

    /// The layer count is read from the `layers.N` keys and must equal `layerCount`; a nil
    /// `hiddenDim` is read from `layers.0`.
    /// ref: sam2/modeling/sam2_utils.py MLP.__init__
    package init(weights: WeightStore, path: String, inputDim: Int, hiddenDim: Int?, outputDim: Int, layerCount: Int,
                activation: Activation, sigmoidOutput: Bool = false, layerCountField: String? = nil) throws(WeightError) {
        self.path = path
        let found = NN.childCount("\(path).layers", in: weights)
        guard found == layerCount, layerCount > 0 else {
            let expectation = layerCountField.map { "config.\($0) is \(layerCount)" } ?? "the model has \(layerCount)"
            throw .invalid(key: "\(path).layers", reason: "the weights hold \(found) layers but \(expectation)", source: weights.source)
        }
        var layers: [NN.Linear] = []
        var width = hiddenDim
        for index in 0..<layerCount {
            let last = index == layerCount - 1
            let layer = try NN.Linear(weights: weights, path: "\(path).layers.\(index)", inFeatures: index == 0 ? inputDim : width,
                                      outFeatures: last ? outputDim : width)
            if index == 0 { width = layer.outFeatures }
            layers.append(layer)
        }
        self.layers = layers
        self.activation = activation
        self.sigmoidOutput = sigmoidOutput
    }

    /// ref: sam2_utils.py MLP.forward — x = self.act(layer(x)) if i < num_layers - 1 else layer(x);
    /// then F.sigmoid(x) if sigmoid_output. With `residual`, returns residual + mlp(x) (Hiera's
    /// `x + mlp(norm2(x))`, fused into the last layer unless observed).
    package func callAsFunction(_ x: FloatTensor, plusResidual residual: FloatTensor? = nil,
                               observer: ModuleObserver? = nil) -> FloatTensor {
        let hidden: Kernels.Epilogue = activation == .gelu ? .gelu : .relu
        // Two layers (Hiera's MLPs) may run as one pass of int8 products.
        if layers.count == 2, !sigmoidOutput,
           let y = layers[1].int8MLP(x, after: layers[0], activation: hidden.activation, plus: residual, observer: observer) {
            return y
        }
        var y = x
        for (index, layer) in layers.enumerated() {
            let last = index == layers.count - 1
            if let observer {
                y = layer(y, observer: observer)
                if !last {
                    Kernels.applyEpilogue(hidden, to: &y)
                    observer("\(path).act", y)
                }
            } else if last {
                y = layer(y, then: Kernels.Epilogue(residual: sigmoidOutput ? nil : residual))
            } else {
                y = layer(y, then: hidden)
            }
        }
        if sigmoidOutput { Kernels.sigmoid(&y) }
        observer?(path, y)
        if let residual, observer != nil || sigmoidOutput { Kernels.add(&y, residual) }
        return y
    }
}
