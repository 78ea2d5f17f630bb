import SAMImage

/// Why a folder of video frames, or one of its frames, is refused: it names the file (or the
/// folder), says what is wrong, and carries a code. All are the user's input to fix (a tool
/// exits 2 on them).
public struct FrameFolderError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What kind of problem it is; the raw value is the code tools print in brackets.
    public enum Code: String, Sendable {
        /// The path is missing, not a folder, or cannot be listed, or the URL given is not a file URL.
        case notAFolder = "not_a_folder"
        /// The folder holds no frames (hidden files aside).
        case empty
        /// An entry that is not a frame: another extension, a subfolder, a special file, a dangling link.
        case unexpectedEntry = "unexpected_entry"
        /// A frame file whose name before the extension is not a non-negative integer.
        case badFrameName = "bad_frame_name"
        /// Two frame files with the same number (`7.jpg` and `007.png`).
        case duplicateFrame = "duplicate_frame"
        /// A frame whose size differs from the first frame's.
        case sizeMismatch = "size_mismatch"
        /// The frame's file cannot be read or decoded, or is over `ImageLimits` (`imageError` says how).
        case image
        /// A frame position outside 0..<count.
        case invalidArgument
    }

    /// What kind of problem it is.
    public let code: Code
    /// The frame file, or the folder for folder-wide problems.
    public let file: String
    /// What is wrong, in a sentence.
    public let message: String
    /// The reader's error, for `.image`.
    public let imageError: ImageError?

    /// An error of `code` naming `file`, with `message`; `imageError` is the reader's, for `.image`.
    public init(_ code: Code, file: String, _ message: String, imageError: ImageError? = nil) {
        self.code = code
        self.file = file
        self.message = message
        self.imageError = imageError
    }

    /// A frame's reading error, naming the frame's file.
    init(reading error: ImageError, frame: String) {
        self.init(.image, file: error.file == ImageError.inMemory ? frame : error.file, error.message, imageError: error)
    }

    /// `file: message [code]`, as the tools print it.
    public var description: String { "\(file): \(message) [\(code.rawValue)]" }
}
