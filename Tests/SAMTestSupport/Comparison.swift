/// Error figures between an output and its reference.
public struct Difference: CustomStringConvertible, Sendable {
    public let maxAbs: Float
    public let meanAbs: Float
    public let worstIndex: Int
    /// True when any element of either side is NaN or infinite, which never passes.
    public let nonFinite: Bool

    public init(_ actual: [Float], _ expected: [Float]) {
        precondition(actual.count == expected.count, "comparing \(actual.count) values with \(expected.count)")
        var maxAbs: Float = 0, sum: Double = 0, worst = 0, nonFinite = false
        for index in actual.indices {
            if !actual[index].isFinite || !expected[index].isFinite { nonFinite = true; continue }
            let difference = abs(actual[index] - expected[index])
            sum += Double(difference)
            if difference > maxAbs { maxAbs = difference; worst = index }
        }
        self.maxAbs = maxAbs
        self.meanAbs = actual.isEmpty ? 0 : Float(sum / Double(actual.count))
        self.worstIndex = worst
        self.nonFinite = nonFinite
    }

    /// Passes when finite and no element is further than `atol` from its reference.
    public func within(_ atol: Float) -> Bool { !nonFinite && maxAbs <= atol }

    public var description: String {
        "max abs \(maxAbs) (at \(worstIndex)), mean abs \(meanAbs)" + (nonFinite ? ", NON-FINITE values" : "")
    }
}
