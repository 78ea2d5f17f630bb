import SAMFiles
import SAMModel

/// Why a .samw model file could not be written or loaded; always names the file.
public enum ModelFileError: Error, CustomStringConvertible {
    case format(FormatError)
    case metadata(file: String, String)
    case weights(file: String, WeightError)

    public var description: String {
        switch self {
        case .format(let error): "\(error)"
        case .metadata(let file, let message): "\(file): metadata: \(message)"
        case .weights(let file, let error): "\(file): \(error)"
        }
    }
}
