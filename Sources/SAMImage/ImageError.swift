/// A typed error for anything the image side refuses: it always names the file (or
/// `<memory>` for in-memory data and arguments), says what is wrong, and carries a code.
public struct ImageError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Code: String, Sendable {
        /// The file cannot be opened or read (missing, permissions, a folder).
        case unreadable
        /// The file ends before the image data does.
        case truncated
        /// The bytes are not a valid image of the format their signature announces.
        case corrupt
        /// Not a PNG or JPEG, or a variant of one this reader does not handle.
        case unsupported
        /// Zero-sized, or wider or taller than `RGBImage.maxDimension`.
        case badDimensions
        /// Over a decoding limit (`ImageLimits`: pixels, progressive scans, file size), from the header.
        case overLimit = "over_limit"
        /// Writing an output failed.
        case writeFailed
        /// An output's name is taken by something it may not replace (see `OutputRule`).
        case outputRefused = "output_refused"
        /// A caller-supplied value is out of range (sizes, shapes, buffer lengths).
        case invalidArgument
    }

    public let code: Code
    public let file: String
    public let message: String

    public init(_ code: Code, file: String, _ message: String) {
        self.code = code
        self.file = file
        self.message = message
    }

    public var description: String { "\(file): \(message) [\(code.rawValue)]" }

    /// The name errors about in-memory images carry until a caller that knows the file names it.
    public static let inMemory = "<memory>"

    /// This error about the image read from `file`: an error raised on its pixels in memory (a
    /// resize, a preprocessing step) names the file instead of `<memory>`.
    package func attributed(to file: String) -> ImageError {
        self.file == Self.inMemory ? ImageError(code, file: file, message) : self
    }
}
