/// Why the image encoder refused an input at run time. (Load-time problems are `WeightError`s.)
public enum ImageEncoderError: Error, CustomStringConvertible, Equatable {
    /// The image is not [B, inChannels, imageSize, imageSize]. Upstream TinyViT fixes every stage's
    /// resolution when it is built (`input_resolution`), so only that one size can be encoded.
    case imageShape(expected: String, actual: [Int])
    /// A module output was asked for (`ImageEncoder.features(_:observer:tapping:)`) that this
    /// encoder does not hand out.
    case untappable(path: String, tappable: String)

    /// A one-line message naming the expected and the actual input.
    public var description: String {
        switch self {
        case .imageShape(let expected, let actual):
            "image encoder input has shape \(actual), expected \(expected)"
        case .untappable(let path, let tappable):
            "the image encoder cannot hand out the output of \(path) (it can: \(tappable))"
        }
    }
}
