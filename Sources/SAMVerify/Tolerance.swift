import SAMFiles
import SAMFormats

/// Polygraphy's element rule: an element fails only where its absolute error exceeds both `atol`
/// and `rtol * |reference|`. NaN or infinity on either side never passes (see `ErrorFigures`).
public struct Tolerance: Codable, Sendable, Equatable, CustomStringConvertible {
    public var atol: Double
    public var rtol: Double

    public init(atol: Double, rtol: Double) {
        self.atol = atol
        self.rtol = rtol
    }

    /// The defaults, justified in README.md § Verification by measured figures: the native port lands
    /// within ~5e-6 of PyTorch on every output of the tiny set and the full-size set, onnxruntime within
    /// ~5e-6 as well, so 1e-4 keeps a 20x margin over both while a one-weight mutation is far outside it.
    public static let defaults = Tolerance(atol: 1e-4, rtol: 1e-4)

    /// True when an element with this absolute error against this (finite) reference passes.
    @inline(__always)
    public func allows(error: Double, reference: Double) -> Bool {
        error <= atol || error <= rtol * abs(reference)
    }

    public var description: String { "atol \(formatFigure(atol)), rtol \(formatFigure(rtol))" }
}

/// Tolerances a reference set or the command line sets; either half may be left to the level below.
public struct ToleranceOverride: Sendable, Equatable {
    public var atol: Double?
    public var rtol: Double?

    public init(atol: Double? = nil, rtol: Double? = nil) {
        self.atol = atol
        self.rtol = rtol
    }

    public var isEmpty: Bool { atol == nil && rtol == nil }

    /// Reads `{"atol": a, "rtol": r}` (either key optional) from a manifest object.
    init(json: JSONValue?) {
        atol = json?["atol"]?.numberValue
        rtol = json?["rtol"]?.numberValue
    }
}

/// A tolerance a reference set's manifest sets, for the reports: where (`scope`: "manifest",
/// "manifest case point1", "manifest case point1 output low_res_masks") and what.
public struct ManifestTolerance: Codable, Sendable, Equatable, CustomStringConvertible {
    public var scope: String
    public var atol: Double?
    public var rtol: Double?
    /// True when either half is larger than the default's: the set lowers its own bar.
    public var looserThanDefaults: Bool

    public init(scope: String, _ override: ToleranceOverride) {
        self.scope = scope
        atol = override.atol
        rtol = override.rtol
        looserThanDefaults = (override.atol ?? 0) > Tolerance.defaults.atol || (override.rtol ?? 0) > Tolerance.defaults.rtol
    }

    public var description: String {
        let halves = [atol.map { "atol \(formatFigure($0))" }, rtol.map { "rtol \(formatFigure($0))" }].compactMap { $0 }
        return "\(scope): " + halves.joined(separator: ", ") + (looserThanDefaults ? " (LOOSER than the defaults)" : "")
    }
}

/// The tolerance a check used, and where each half came from ("default", "manifest",
/// "manifest case point1", "manifest case point1 output low_res_masks", "command line").
public struct ResolvedTolerance: Codable, Sendable, Equatable {
    public var atol: Double
    public var rtol: Double
    public var atolSource: String
    public var rtolSource: String

    public var tolerance: Tolerance { Tolerance(atol: atol, rtol: rtol) }

    public static let defaults = ResolvedTolerance(atol: Tolerance.defaults.atol, rtol: Tolerance.defaults.rtol,
                                                   atolSource: "default", rtolSource: "default")

    /// Applies `override` on top of this, naming it `source` for the halves it sets.
    public func applying(_ override: ToleranceOverride, source: String) -> ResolvedTolerance {
        var result = self
        if let atol = override.atol { result.atol = atol; result.atolSource = source }
        if let rtol = override.rtol { result.rtol = rtol; result.rtolSource = source }
        return result
    }
}
