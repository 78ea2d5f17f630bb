import SAMTensor

/// Weight-holding layers named after their `torch.nn` counterparts (`NN.Linear` is `nn.Linear`),
/// shared by the prompt encoder and the mask decoder. Each one keeps its state-dict `path`, uses
/// PyTorch's weight layouts unchanged and runs on `Kernels`.
///
/// Kept in a namespace so the generic names cannot clash with other parts of the model.
package enum NN {
    /// Takes `key`, whose shape must match `pattern` (nil entries are free and read from the
    /// tensor itself, e.g. `[nil, 256]` for a Linear whose output width the weights decide).
    static func take(_ key: String, shape pattern: [Int?], from weights: WeightStore) throws(WeightError) -> FloatTensor {
        try weights.take(key, shape: shape(of: key, matching: pattern, in: weights))
    }

    /// `take` for a weight a kernel multiplies by, used in place (see `WeightStore.takeWeight`).
    static func takeWeight(_ key: String, shape pattern: [Int?], from weights: WeightStore) throws(WeightError) -> WeightTensor {
        try weights.takeWeight(key, shape: shape(of: key, matching: pattern, in: weights))
    }

    /// The stored shape of `key`, which must match `pattern`.
    private static func shape(of key: String, matching pattern: [Int?], in weights: WeightStore) throws(WeightError) -> [Int] {
        guard let actual = weights.shape(of: key) else { throw .missing(key: key, source: weights.source) }
        let matches = actual.count == pattern.count && zip(actual, pattern).allSatisfy { $1 == nil || $0 == $1 }
        guard matches else {
            if pattern.allSatisfy({ $0 != nil }) {
                throw .shapeMismatch(key: key, expected: pattern.map { $0! }, actual: actual, source: weights.source)
            }
            let wanted = "[" + pattern.map { $0.map(String.init) ?? "?" }.joined(separator: ",") + "]"
            throw .invalid(key: key, reason: "has shape \(Shape.text(actual)), the model needs \(wanted)", source: weights.source)
        }
        return actual
    }

    /// How many consecutive children `prefix.0`, `prefix.1`, ... the weights hold
    /// (the length of an `nn.ModuleList` / `nn.Sequential`, read from its keys).
    static func childCount(_ prefix: String, in weights: WeightStore) -> Int {
        var indices = Set<Int>()
        let start = prefix + "."
        for key in weights.keys where key.hasPrefix(start) {
            if let index = Int(key.dropFirst(start.count).prefix { $0 != "." }) { indices.insert(index) }
        }
        var count = 0
        while indices.contains(count) { count += 1 }
        return count
    }
}

extension NN {
    /// Throws unless a size read from the weights (`fromWeights`, seen in `key`) equals the
    /// configured one (`configured`, the `SAMConfig` field named `field`).
    static func requireConsistent(_ fromWeights: Int, _ configured: Int, field: String, key: String,
                                  source: String) throws(WeightError) {
        guard fromWeights != configured else { return }
        throw .invalid(key: key, reason: "the weights give \(fromWeights) but config.\(field) is \(configured)", source: source)
    }
}
