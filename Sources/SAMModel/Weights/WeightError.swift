import SAMTensor

/// Why weights could not be loaded into the module tree. Every case names the dotted
/// PyTorch state-dict path, so the message points at the exact tensor.
public enum WeightError: Error, CustomStringConvertible, Equatable {
    /// The model needs the weight `key`, and `source` does not hold it.
    case missing(key: String, source: String)
    /// The weight `key` has shape `actual` where the model needs `expected`.
    case shapeMismatch(key: String, expected: [Int], actual: [Int], source: String)
    /// Weights of `source` that no module took (a wrong family or configuration).
    case unused(keys: [String], source: String)
    /// The weight `key` cannot be used, for `reason`.
    case invalid(key: String, reason: String, source: String)

    /// The file (or other source) the weights came from, which every message names first.
    public var source: String {
        switch self {
        case .missing(_, let source), .shapeMismatch(_, _, _, let source), .unused(_, let source), .invalid(_, _, let source):
            source
        }
    }

    /// A one-line message naming the source file and the weight.
    public var description: String {
        switch self {
        case .missing(let key, let source):
            "\(source): weight '\(key)' is required by the model but not supplied"
        case .shapeMismatch(let key, let expected, let actual, let source):
            "\(source): weight '\(key)' has shape \(Shape.text(actual)), the model needs \(Shape.text(expected))"
        case .unused(let keys, let source):
            "\(source): \(keys.count) supplied weight(s) not used by the model: " + keys.prefix(8).joined(separator: ", ") + (keys.count > 8 ? ", ..." : "")
        case .invalid(let key, let reason, let source):
            "\(source): weight '\(key)': \(reason)"
        }
    }
}
