import Foundation

/// A float64 reference value, and how far an honest float32 evaluation of the same formula may
/// land from it: tolerances derived from the computation, not from one machine's results.
///
/// Kernels sum in orders the tests cannot know: BLAS libraries block, vectorise and split sums
/// differently on each CPU (OpenBLAS's Haswell and SkylakeX kernels differ by 6x on one 18,432-term
/// convolution). So the error is modelled, not measured. Under the standard model of float
/// arithmetic every operation returns the exact result times (1 + δ), |δ| ≤ u = 2⁻²⁴. Treating the
/// δ as independent with mean zero (Higham & Mary, "A new approach to probabilistic rounding error
/// analysis", SIAM J. Sci. Comput. 41(5), 2019), each rounding adds variance u²/3 · result², and
/// errors already present propagate to first order through each operation's derivative.
///
/// Written as a float64 formula over `Expected` values, a sum accumulates left to right, which has
/// the largest intermediate values of the orders kernels use (blocked, pairwise, several
/// accumulators), so its variance is an upper estimate for theirs. The tolerance allows
/// `standardDeviations` of that, plus a deterministic bound for the approximations the kernels
/// make on purpose (a fitted erf, a polynomial exp). A mistake of one term in an 18,432-term sum
/// of [-1, 1] products (an error of about 0.25) is still 150 times the tolerance.
public struct Expected: Sendable, CustomStringConvertible {
    public var value: Double
    /// Variance of the float32 rounding error accumulated so far (absolute, squared).
    public var roundingVariance: Double
    /// A bound on the error of deliberate approximations, propagated linearly.
    public var approximation: Double

    /// Unit roundoff of Float (round to nearest).
    public static let unitRoundoff = Double(Float.ulpOfOne) / 2
    /// Variance one rounding adds, per unit of result squared: δ uniform on [-u, u].
    static let roundingVariancePerUnit = unitRoundoff * unitRoundoff / 3
    /// Standard deviations of rounding error a pass allows: a Gaussian exceeds 10 with probability
    /// 1e-23, so an honest kernel never fails on any of the tests' few million elements.
    public static let standardDeviations = 10.0

    public init(value: Double, roundingVariance: Double, approximation: Double) {
        self.value = value
        self.roundingVariance = roundingVariance
        self.approximation = approximation
    }

    /// A value the kernel receives exactly (a float32 input or weight).
    public init(exact value: Double) { self.init(value: value, roundingVariance: 0, approximation: 0) }
    public init(exact value: Float) { self.init(exact: Double(value)) }

    public static let zero = Expected(exact: 0.0)

    /// The largest |float32 result - value| an honest evaluation reaches.
    public var tolerance: Double { Self.standardDeviations * roundingVariance.squareRoot() + approximation }

    public var description: String { "\(value) ± \(tolerance)" }

    /// The result of one float32 operation on exact-or-estimated operands: propagated variance,
    /// plus the operation's own rounding.
    static func rounded(_ value: Double, propagated variance: Double, approximation: Double) -> Expected {
        Expected(value: value, roundingVariance: variance + roundingVariancePerUnit * value * value, approximation: approximation)
    }

    public static func + (a: Expected, b: Expected) -> Expected {
        rounded(a.value + b.value, propagated: a.roundingVariance + b.roundingVariance,
                approximation: a.approximation + b.approximation)
    }

    public static func - (a: Expected, b: Expected) -> Expected {
        rounded(a.value - b.value, propagated: a.roundingVariance + b.roundingVariance,
                approximation: a.approximation + b.approximation)
    }

    public static func * (a: Expected, b: Expected) -> Expected {
        rounded(a.value * b.value, propagated: b.value * b.value * a.roundingVariance + a.value * a.value * b.roundingVariance,
                approximation: abs(b.value) * a.approximation + abs(a.value) * b.approximation)
    }

    public static func / (a: Expected, b: Expected) -> Expected {
        let quotient = a.value / b.value, slope = quotient / b.value
        return rounded(quotient, propagated: a.roundingVariance / (b.value * b.value) + slope * slope * b.roundingVariance,
                       approximation: a.approximation / abs(b.value) + abs(slope) * b.approximation)
    }

    public static func += (a: inout Expected, b: Expected) { a = a + b }

    public func squareRoot() -> Expected {
        let root = value.squareRoot(), slope = 0.5 / root
        return Self.rounded(root, propagated: slope * slope * roundingVariance, approximation: slope * approximation)
    }

    /// e^x as a kernel computes it within `ulps` units in the last place (an ulp of a float is at
    /// most 2u of its magnitude).
    public func exp(withinULPs ulps: Double) -> Expected {
        let result = Foundation.exp(value)
        return Self.rounded(result, propagated: result * result * roundingVariance,
                            approximation: result * approximation + ulps * 2 * Self.unitRoundoff * result)
    }

    /// How far the kernels' erf (a rational fit, scripts/fit_erf.py) may be from erf: the script
    /// measures 4.6e-7 for a float32 evaluation; 4.7e-7 holds for the plain and the fused
    /// multiply-add builds alike on ActivationTests' dense grid.
    public static let erfApproximation = 4.7e-7

    /// GELU's exact (erf) form, as the kernels compute it: the erf fit's error scaled by 0.5 |x|
    /// (it dominates in the tails, where 1 + erf cancels), plus the few roundings of the formula
    /// (4 ulps of the result).
    public func gelu() -> Expected {
        let x = value, root2 = 2.0.squareRoot()
        let result = 0.5 * x * (1 + erf(x / root2))
        // d/dx GELU = Φ(x) + x φ(x), at most ~1.13 in magnitude.
        let slope = 0.5 * (1 + erf(x / root2)) + x * Foundation.exp(-0.5 * x * x) / (2 * Double.pi).squareRoot()
        return Expected(value: result, roundingVariance: slope * slope * roundingVariance,
                        approximation: abs(slope) * approximation + 0.5 * abs(x) * Self.erfApproximation
                            + 4 * Double(Float(result).ulp))
    }

    public func relu() -> Expected { value > 0 ? self : .zero }
}

extension Array where Element == Expected {
    /// Exact values, one per float32 input.
    public init(exact values: [Float]) { self = values.map { Expected(exact: $0) } }
}

/// How a float32 result compares with its `Expected` values.
public struct ToleranceCheck: CustomStringConvertible, Sendable {
    /// Elements whose error exceeds their tolerance (NaN always does).
    public let failures: Int
    public let maxAbsError: Double
    /// The largest error as a fraction of its element's tolerance, and where.
    public let worstRatio: Double
    public let worstIndex: Int
    public let worstTolerance: Double
    /// The worst element's reference, for the figures.
    public let worstExpected: Expected

    public init(_ actual: [Float], _ expected: [Expected]) {
        precondition(actual.count == expected.count, "comparing \(actual.count) values with \(expected.count)")
        var failures = 0, maxAbs = 0.0, worstRatio = 0.0, worstIndex = 0, worstTolerance = 0.0
        for index in actual.indices {
            let error = abs(Double(actual[index]) - expected[index].value)
            let tolerance = expected[index].tolerance
            guard error <= tolerance else {
                failures += 1
                let ratio = error.isNaN ? .infinity : error / tolerance
                if ratio >= worstRatio { (worstRatio, worstIndex, worstTolerance) = (ratio, index, tolerance) }
                maxAbs = error.isNaN ? .nan : max(maxAbs, error)
                continue
            }
            maxAbs = max(maxAbs, error)
            let ratio = tolerance > 0 ? error / tolerance : 0
            if ratio > worstRatio { (worstRatio, worstIndex, worstTolerance) = (ratio, index, tolerance) }
        }
        self.failures = failures
        self.maxAbsError = maxAbs
        self.worstRatio = worstRatio
        self.worstIndex = worstIndex
        self.worstTolerance = worstTolerance
        self.worstExpected = expected.isEmpty ? .zero : expected[worstIndex]
    }

    public var passed: Bool { failures == 0 }

    public var description: String {
        let used = String(format: "%.3g", worstRatio * 100)
        let parts = String(format: "value %.6g, rounding sd %.3g, approximation %.3g", worstExpected.value,
                           worstExpected.roundingVariance.squareRoot(), worstExpected.approximation)
        return "max abs error \(maxAbsError); worst element \(worstIndex) uses \(used)% of its tolerance \(worstTolerance) (\(parts))"
            + (failures > 0 ? "; \(failures) element(s) over" : "")
    }
}
