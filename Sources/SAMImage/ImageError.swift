/// A typed error for anything the image side refuses: it always names the file (or
/// `<memory>` for in-memory data and arguments), says what is wrong, and carries a code.
public struct ImageError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What kind of failure it was; the raw value is printed in brackets after the message.
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

    /// What kind of failure it was.
    public let code: Code
    /// The file the error is about, or `<memory>` (`inMemory`) for pixels and arguments in memory.
    public let file: String
    /// What is wrong, with the values involved.
    public let message: String

    /// An error of kind `code` about `file`, saying `message`.
    public init(_ code: Code, file: String, _ message: String) {
        self.code = code
        self.file = file
        self.message = message
    }

    /// One line: the file, the message and the code in brackets.
    public var description: String { "\(file): \(message) [\(code.rawValue)]" }

    /// The name errors about in-memory images carry until a caller that knows the file names it.
    public static let inMemory = "<memory>"

    /// This error about the image read from `file`: an error raised on its pixels in memory (a
    /// resize, a preprocessing step) names the file instead of `<memory>`.
    package func attributed(to file: String) -> ImageError {
        self.file == Self.inMemory ? ImageError(code, file: file, message) : self
    }
}
