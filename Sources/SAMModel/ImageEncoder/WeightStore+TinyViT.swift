import SAMTensor

extension WeightStore {
    /// The shape of `key`, or `.missing` if the weights do not hold it.
    func requireShape(_ key: String) throws(WeightError) -> [Int] {
        guard let shape = shape(of: key) else { throw .missing(key: key, source: source) }
        return shape
    }

    /// An error for a hyperparameter that the weights determine but that disagrees with the config.
    func configMismatch(_ key: String, _ what: String, weights: some CustomStringConvertible,
                        config: some CustomStringConvertible, because detail: String) -> WeightError {
        .invalid(key: key, reason: "\(detail) gives \(what) = \(weights), but the config says \(config)", source: source)
    }
}
