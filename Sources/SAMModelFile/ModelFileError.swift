import SAMFiles
import SAMModel

/// Why a .samw model file could not be written or loaded; always names the file.
public enum ModelFileError: Error, CustomStringConvertible {
    /// The file is not a readable `.samw` (missing, truncated, a bad table or checksum), or could not be written.
    case format(FormatError)
    /// The file's metadata is unreadable or does not agree with itself or with its tensors: the file, then why.
    case metadata(file: String, String)
    /// The model could not be built from the file's weights (one missing, unused or of the wrong shape): the file, then why.
    case weights(file: String, WeightError)

    /// The message for a person, naming the file.
    public var description: String {
        switch self {
        case .format(let error): "\(error)"
        case .metadata(let file, let message): "\(file): metadata: \(message)"
        // The weights' own message names their source: the file, unless they came from elsewhere.
        case .weights(let file, let error): error.source == file ? "\(error)" : "\(file): \(error)"
        }
    }
}
