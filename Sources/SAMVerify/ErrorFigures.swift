import Foundation

/// Error figures of one output (or one module's output) against its reference, under a tolerance.
///
/// Absolute error is |output - reference|; relative error is that over |reference| (0 where both are
/// 0, infinite where only the reference is). Elements where either side is NaN or infinite are
/// counted in `nonFinite`, count as failing and are left out of the statistics.
public struct ErrorFigures: Codable, Sendable, Equatable {
    /// Elements compared.
    public var count: Int
    /// Elements outside the tolerance, non-finite ones included.
    public var failing: Int
    /// Elements where the output or the reference is NaN or infinite.
    public var nonFinite: Int
    public var firstNonFiniteIndex: [Int]?
    public var firstFailingIndex: [Int]?

    public var maxAbs: Double
    public var meanAbs: Double
    public var medianAbs: Double
    public var maxRel: Double
    public var meanRel: Double
    public var medianRel: Double
    /// The largest relative error among elements whose reference is at least 1 in magnitude, where rtol
    /// can widen the bar beyond atol (nil when there is none): what `--calibrate` bases rtol on.
    public var maxRelAtLeastOne: Double?

    /// The smallest atol that would pass every finite element, with rtol at the value used.
    public var minPassingAtol: Double
    /// The smallest rtol that would pass every finite element, with atol at the value used; infinite when
    /// an element whose reference is exactly 0 exceeds atol (no rtol can pass it).
    public var minPassingRtol: Double

    /// The element with the largest absolute error (C-order multi-index), and its two values.
    public var worstIndex: [Int]
    public var worstOutput: Double
    public var worstReference: Double

    /// True when no element fails and none is NaN or infinite.
    public var passes: Bool

    /// Compares `output` with `reference` (same element count, `shape` for the indices).
    public init(output: [Float], reference: [Float], shape: [Int], tolerance: Tolerance) {
        precondition(output.count == reference.count, "comparing \(output.count) values with \(reference.count)")
        let n = output.count
        var absolute = [Double](), relative = [Double]()
        absolute.reserveCapacity(n)
        relative.reserveCapacity(n)
        var failing = 0, nonFinite = 0
        var firstNonFinite: Int?, firstFailing: Int?
        var maxAbs = 0.0, worst: Int?, sumAbs = 0.0, sumRel = 0.0, maxRel = 0.0
        var maxRelLarge: Double?
        var minAtol = 0.0, minRtol = 0.0
        for index in 0..<n {
            let o = output[index], r = reference[index]
            guard o.isFinite, r.isFinite else {
                nonFinite += 1
                failing += 1
                if firstNonFinite == nil { firstNonFinite = index }
                if firstFailing == nil { firstFailing = index }
                continue
            }
            let reference = Double(r)
            let error = abs(Double(o) - reference)
            let magnitude = abs(reference)
            let rel = magnitude > 0 ? error / magnitude : (error == 0 ? 0 : .infinity)
            absolute.append(error)
            relative.append(rel)
            sumAbs += error
            sumRel += rel
            if worst == nil || error > maxAbs { maxAbs = error; worst = index }
            if rel > maxRel { maxRel = rel }
            if magnitude >= 1 { maxRelLarge = max(maxRelLarge ?? 0, rel) }
            // Passing needs error <= atol or error <= rtol * |reference|.
            if error > tolerance.rtol * magnitude { minAtol = max(minAtol, error) }
            if error > tolerance.atol { minRtol = max(minRtol, rel) }
            if !tolerance.allows(error: error, reference: reference) {
                failing += 1
                if firstFailing == nil { firstFailing = index }
            }
        }
        let finite = absolute.count
        self.count = n
        self.failing = failing
        self.nonFinite = nonFinite
        self.firstNonFiniteIndex = firstNonFinite.map { Self.multiIndex($0, shape: shape) }
        self.firstFailingIndex = firstFailing.map { Self.multiIndex($0, shape: shape) }
        self.maxAbs = maxAbs
        self.meanAbs = finite > 0 ? sumAbs / Double(finite) : 0
        self.medianAbs = Self.median(&absolute)
        self.maxRel = maxRel
        self.meanRel = finite > 0 ? sumRel / Double(finite) : 0
        self.medianRel = Self.median(&relative)
        self.maxRelAtLeastOne = maxRelLarge
        self.minPassingAtol = minAtol
        self.minPassingRtol = minRtol
        // The worst finite element; with none finite, the first non-finite one.
        let shown = worst ?? firstNonFinite
        self.worstIndex = shown.map { Self.multiIndex($0, shape: shape) } ?? []
        self.worstOutput = shown.map { Double(output[$0]) } ?? 0
        self.worstReference = shown.map { Double(reference[$0]) } ?? 0
        self.passes = failing == 0 && nonFinite == 0
    }

    /// The C-order multi-index of flat element `flat` in `shape`.
    public static func multiIndex(_ flat: Int, shape: [Int]) -> [Int] {
        guard !shape.isEmpty else { return [] }
        var index = [Int](repeating: 0, count: shape.count)
        var rest = flat
        for axis in stride(from: shape.count - 1, through: 0, by: -1) {
            let size = max(shape[axis], 1)
            index[axis] = rest % size
            rest /= size
        }
        return index
    }

    /// The median (mean of the two middle values for an even count), 0 for none. Reorders `values`.
    static func median(_ values: inout [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        values.sort()
        let middle = values.count / 2
        return values.count % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2
    }
}

/// Where a tensor holds NaN or infinite values: counts and the first one's index.
public struct NonFiniteSummary: Codable, Sendable, Equatable, CustomStringConvertible {
    public var nan: Int
    public var infinite: Int
    public var firstIndex: [Int]

    /// nil when every value is finite.
    public init?(_ values: [Float], shape: [Int]) {
        var nan = 0, infinite = 0, first: Int?
        for (index, value) in values.enumerated() where !value.isFinite {
            if value.isNaN { nan += 1 } else { infinite += 1 }
            if first == nil { first = index }
        }
        guard let first else { return nil }
        self.nan = nan
        self.infinite = infinite
        self.firstIndex = ErrorFigures.multiIndex(first, shape: shape)
    }

    public var description: String {
        "\(nan) NaN and \(infinite) infinite value\(nan + infinite == 1 ? "" : "s"), the first at \(formatIndex(firstIndex))"
    }
}

/// `1.23e-05`; "inf" for infinity.
func formatFigure(_ value: Double) -> String {
    if value.isNaN { return "nan" }
    if value.isInfinite { return value > 0 ? "inf" : "-inf" }
    if value == 0 { return "0" }
    return String(format: "%.2e", value)
}

/// `[0,2,17,40]`.
func formatIndex(_ index: [Int]) -> String { "[" + index.map(String.init).joined(separator: ",") + "]" }
