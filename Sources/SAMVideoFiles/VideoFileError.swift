/// Why a video file, or one of its frames, is refused: it names the file (and the frame, by its
/// position from 0, where one is at fault), says what is wrong, and carries a code. All are the
/// user's input to fix (a tool exits 2 on them).
public struct VideoFileError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What kind of problem it is; the raw value is the code tools print in brackets.
    public enum Code: String, Sendable {
        /// The path is missing or cannot be opened, or the URL given is not a file URL.
        case unreadable
        /// A folder, FIFO, device or socket: only regular files are read.
        case notAFile = "not_a_file"
        /// libavformat does not open it as a media file (empty, random bytes, an unknown format, or
        /// cut before the container's header ends).
        case notAVideo = "not_a_video"
        /// The file holds no video stream (audio only, subtitles).
        case noVideoStream = "no_video_stream"
        /// The video's codec has no decoder in this libavcodec.
        case unsupportedCodec = "unsupported_codec"
        /// The demuxer or decoder rejects a frame's data, or no frame decodes.
        case undecodable
        /// The file ends before its frames do.
        case truncated
        /// A frame whose size differs from the first frame's.
        case sizeMismatch = "size_mismatch"
        /// A frame over `ImageLimits` or `RGBImage.maxDimension`.
        case overLimit = "over_limit"
        /// A frame decodes to other pixels than when the file was opened (the file changed).
        case changed
        /// A frame position outside 0..<frameCount.
        case invalidArgument
    }

    /// What kind of problem it is.
    public let code: Code
    /// The video file, as given.
    public let file: String
    /// The frame's position (0 is the first frame) when one frame is at fault.
    public let frame: Int?
    /// What is wrong, in a sentence.
    public let message: String

    /// An error of `code` naming `file` (and `frame`, when one frame is at fault), with `message`.
    public init(_ code: Code, file: String, frame: Int? = nil, _ message: String) {
        self.code = code
        self.file = file
        self.frame = frame
        self.message = message
    }

    /// This error, placed at `frame` unless it names one already.
    func at(frame position: Int) -> VideoFileError {
        frame == nil ? VideoFileError(code, file: file, frame: position, message) : self
    }

    /// `file: frame N: message [code]`, as the tools print it.
    public var description: String {
        "\(file): " + (frame.map { "frame \($0): " } ?? "") + "\(message) [\(code.rawValue)]"
    }
}
