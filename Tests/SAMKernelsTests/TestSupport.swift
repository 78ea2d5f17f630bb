import SAMTensor
import SAMTestSupport
import Testing

/// A tensor of uniform values in `range`.
func randomTensor(_ shape: [Int], in range: ClosedRange<Float> = -1...1, using rng: inout SplitMix64) -> FloatTensor {
    let count = shape.reduce(1, *)
    return FloatTensor(shape: shape, data: (0..<count).map { _ in Float.random(in: range, using: &rng) })
}

/// Checks a kernel's output against float64 references element by element, each within the
/// tolerance its own computation earns (see `Expected`), and prints the figures so the measured
/// error shows up in test logs.
func expectClose(_ actual: FloatTensor, _ expected: [Expected], shape: [Int], _ label: String,
                 sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(actual.shape == shape, "\(label): shape \(actual.shape) != expected \(shape)", sourceLocation: sourceLocation)
    guard actual.count == expected.count else {
        Issue.record("\(label): \(actual.count) values, expected \(expected.count)", sourceLocation: sourceLocation)
        return
    }
    let check = ToleranceCheck(actual.data, expected)
    print("[\(label)] \(check)")
    #expect(check.passed, "\(label): \(check)", sourceLocation: sourceLocation)
}

extension FloatTensor {
    /// The tensor's values as exact references.
    var exact: [Expected] { [Expected](exact: data) }
}
