/// Why tracking could not go on; every case names what was wrong (a frame, an object, a limit).
public enum TrackingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The model cannot track (no video modules, not SAM 2, sizes that do not fit).
    case unsupportedModel(String)
    /// A prompt that cannot be used: its frame, object and why.
    case invalidPrompt(frame: Int, object: Int, String)
    /// Propagation asked of objects without a prompt, or frames outside the clip.
    case invalidRequest(String)
    /// The model failed on a frame (a component error, non-finite values).
    case frame(Int, String)
    /// The frames could not be read.
    case frames(String)
    /// Tracking was stopped (the consuming task was cancelled).
    case cancelled

    /// The message for a person: what was wrong and where.
    public var description: String {
        switch self {
        case .unsupportedModel(let message): "the model cannot track: \(message)"
        case .invalidPrompt(let frame, let object, let message): "prompt for object \(object) on frame \(frame): \(message)"
        case .invalidRequest(let message): message
        case .frame(let index, let message): "frame \(index): \(message)"
        case .frames(let message): message
        case .cancelled: "tracking was cancelled"
        }
    }
}
