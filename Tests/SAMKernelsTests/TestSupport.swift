import SAMTensor
import SAMTestSupport
import Testing

/// A tensor of uniform values in `range`.
func randomTensor(_ shape: [Int], in range: ClosedRange<Float> = -1...1, using rng: inout SplitMix64) -> FloatTensor {
    let count = shape.reduce(1, *)
    return FloatTensor(shape: shape, data: (0..<count).map { _ in Float.random(in: range, using: &rng) })
}

/// Largest |actual - expected| over all elements, after checking the shapes match.
func maxAbsError(_ actual: FloatTensor, _ expected: [Double], shape: [Int],
                 sourceLocation: SourceLocation = #_sourceLocation) -> Double {
    #expect(actual.shape == shape, "shape \(actual.shape) != expected \(shape)", sourceLocation: sourceLocation)
    #expect(actual.count == expected.count, sourceLocation: sourceLocation)
    guard actual.count == expected.count else { return .infinity }
    var worst = 0.0
    for (a, e) in zip(actual.data, expected) {
        let error = abs(Double(a) - e)
        // NaN must never pass.
        if error.isNaN { return .infinity }
        worst = max(worst, error)
    }
    return worst
}

/// Float32 results against float64 references: with inputs of magnitude <= 1 and at most a few
/// hundred products per sum, rounding error stays around 1e-5, so 1e-4 leaves margin yet still
/// catches any indexing mistake (those give errors of order 0.1-1).
let tolerance = 1e-4

/// Checks the error and prints it, so the measured value shows up in test logs.
func expectClose(_ actual: FloatTensor, _ expected: [Double], shape: [Int], _ label: String,
                 tolerance: Double = tolerance, sourceLocation: SourceLocation = #_sourceLocation) {
    let error = maxAbsError(actual, expected, shape: shape, sourceLocation: sourceLocation)
    print("max abs error [\(label)]: \(error)")
    #expect(error <= tolerance, "\(label): max abs error \(error) > \(tolerance)", sourceLocation: sourceLocation)
}

extension FloatTensor {
    var doubles: [Double] { data.map(Double.init) }
}
