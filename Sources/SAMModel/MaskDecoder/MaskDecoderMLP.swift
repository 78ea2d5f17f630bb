import SAMKernels
import SAMTensor

extension MaskDecoder {
    /// mask_decoder.py `MLP`: `layers.0 ... layers.(n-1)` Linear layers with ReLU between them and
    /// none after the last. SAM builds every instance with `sigmoid_output=False`, so there is no
    /// final sigmoid. Used for the hypernetworks and the IoU head.
    package struct MLP: Sendable {
        package let path: String
        package let layers: [NN.Linear]

        package var inputDim: Int { layers[0].inFeatures }
        package var outputDim: Int { layers[layers.count - 1].outFeatures }

        /// The layer count is read from the `layers.N` keys and must equal `layerCount`; the first
        /// layer takes `inputDim`, the last gives `outputDim`, the others are `hiddenDim` wide.
        /// ref: mask_decoder.py MLP.__init__
        package init(weights: WeightStore, path: String, inputDim: Int, hiddenDim: Int, outputDim: Int, layerCount: Int,
                    layerCountField: String? = nil) throws(WeightError) {
            self.path = path
            let found = NN.childCount("\(path).layers", in: weights)
            guard found == layerCount, layerCount > 0 else {
                let expectation = layerCountField.map { "config.\($0) is \(layerCount)" } ?? "the model has \(layerCount)"
                throw .invalid(key: "\(path).layers", reason: "the weights hold \(found) layers but \(expectation)", source: weights.source)
            }
            layers = try (0..<layerCount).map { (index) throws(WeightError) in
                try NN.Linear(weights: weights, path: "\(path).layers.\(index)",
                              inFeatures: index == 0 ? inputDim : hiddenDim,
                              outFeatures: index == layerCount - 1 ? outputDim : hiddenDim)
            }
        }

        /// ref: mask_decoder.py MLP.forward — F.relu(layer(x)) for all but the last layer
        package func callAsFunction(_ x: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
            var y = x
            for (index, layer) in layers.enumerated() {
                y = layer(y, observer: observer)
                if index < layers.count - 1 { Kernels.relu(&y) }
            }
            observer?(path, y)
            return y
        }
    }
}
