/// Why a prompts file (or a list of `TrackPrompt`s) is refused: it names the file, the entry
/// (its index in the file's list, from 0) where there is one, and what is wrong.
public struct TrackPromptError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The kind of problem, as a stable name (`rawValue`, shown in brackets in `description`).
    public enum Code: String, Sendable {
        /// The file is larger than `TrackLimits.maxFileBytes`.
        case tooLarge = "too_large"
        /// Not JSON (NaN and Infinity included: JSON has no such numbers).
        case malformed
        /// JSON of the wrong shape: not a list of objects, an unknown or missing key, a value of the wrong type.
        case schema
        /// A value out of its range: a negative or fractional number, a bad label, a box with its
        /// corners swapped, a coordinate too large for a float, an empty mask name; a prompts file's
        /// URL that is not a file URL (`TrackPromptFile.read(contentsOf:frameCount:frameSize:limits:)`).
        case invalidValue = "invalid_value"
        /// An entry with no points, no box and no mask.
        case emptyEntry = "empty_entry"
        /// A mask together with points or a box in one entry.
        case conflictingPrompts = "conflicting_prompts"
        /// A frame past the video's last.
        case frameOutOfRange = "frame_out_of_range"
        /// A point or box corner too far outside the frame (see `TrackPromptFile.validate`).
        case outsideFrame = "outside_frame"
        /// More entries, points in an entry, or objects than `TrackLimits` allows.
        case overLimit = "over_limit"
    }

    /// The kind of problem.
    public let code: Code
    /// The file (or the name the caller gave the data).
    public let source: String
    /// The entry's index in the file's list, from 0, when the problem is in one entry.
    public let entry: Int?
    /// What is wrong, for a person.
    public let message: String

    package init(_ code: Code, source: String, entry: Int? = nil, _ message: String) {
        self.code = code
        self.source = source
        self.entry = entry
        self.message = message
    }

    /// "source: entry N: message [code]".
    public var description: String {
        "\(source): " + (entry.map { "entry \($0): " } ?? "") + "\(message) [\(code.rawValue)]"
    }
}
