import SAMTensor

/// Why prompts or decoder inputs were rejected before any arithmetic ran.
public enum PromptError: Error, Equatable, CustomStringConvertible {
    /// The number of points (or sparse tokens) is outside what the model accepts.
    case pointCount(Int, allowed: ClosedRange<Int>, what: String)
    /// A point coordinate is NaN or infinite.
    case nonFiniteCoordinate(point: Int, x: Float, y: Float)
    /// A label that is not one of -1 (not a point), 0 (background), 1 (foreground),
    /// 2 (box top-left corner), 3 (box bottom-right corner).
    case invalidLabel(point: Int, value: Float)
    /// An input tensor has the wrong shape. `expected` is written like `[1,N,2]`.
    case shape(input: String, expected: String, actual: [Int])
    /// `hasMaskInput` is non-zero but no mask was given.
    case missingMaskInput(hasMaskInput: Float)
    /// A mask input was switched on, but the model's weights have no `mask_downscaling`.
    case noMaskPath
    /// The image features carry a different number of high-resolution maps than the decoder takes.
    case highResolutionFeatures(expected: Int, actual: Int)

    /// A one-line message naming the input and the values involved.
    public var description: String {
        switch self {
        case .pointCount(let count, let allowed, let what):
            "\(what): got \(count), the model accepts \(allowed.lowerBound)...\(allowed.upperBound)"
        case .nonFiniteCoordinate(let point, let x, let y):
            "point \(point) has a non-finite coordinate (\(x), \(y))"
        case .invalidLabel(let point, let value):
            "point \(point) has label \(value); labels are -1 (not a point), 0 (background), 1 (foreground), 2 and 3 (box corners)"
        case .shape(let input, let expected, let actual):
            "\(input) has shape \(Shape.text(actual)), expected \(expected)"
        case .missingMaskInput(let hasMaskInput):
            "hasMaskInput is \(hasMaskInput) but no mask input was given"
        case .noMaskPath:
            "this model has no prompt_encoder.mask_downscaling weights (its export took no mask), so it cannot use a mask input"
        case .highResolutionFeatures(let expected, let actual):
            "the image features hold \(actual) high-resolution map\(actual == 1 ? "" : "s"), this mask decoder takes \(expected)"
        }
    }
}
