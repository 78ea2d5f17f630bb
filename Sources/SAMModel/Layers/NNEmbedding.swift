import SAMTensor

extension NN {
    /// `nn.Embedding`: a learned table of `count` vectors of `dim` values (weight [count, dim]).
    /// SAM only ever uses the rows directly (`weight`), never looks up indices in a batch.
    package struct Embedding: Sendable {
        package let path: String
        package let weight: FloatTensor

        package var count: Int { weight.shape[0] }
        package var dim: Int { weight.shape[1] }

        /// Loads `path.weight`; a nil count or dim is read from the weight's shape.
        package init(weights: WeightStore, path: String, count: Int?, dim: Int?) throws(WeightError) {
            self.path = path
            weight = try NN.take("\(path).weight", shape: [count, dim], from: weights)
        }
    }
}
