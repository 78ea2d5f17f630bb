import Foundation
import SAMImage

extension TrackPromptFile {
    /// The prompts file at a file URL, read and checked against the clip as `read(_:frameCount:frameSize:limits:)`
    /// reads a path. A URL that is not a file URL (https://...) throws `TrackPromptError`
    /// (`.invalidValue`) naming it; nothing is fetched.
    public static func read(contentsOf url: URL, frameCount: Int, frameSize: ImageSize,
                            limits: TrackLimits = .default) throws -> [TrackPrompt] {
        guard url.isFileURL else {
            throw TrackPromptError(.invalidValue, source: url.absoluteString, "not a file URL: a prompts file is read from a local file only")
        }
        return try read(url.path, frameCount: frameCount, frameSize: frameSize, limits: limits)
    }

    /// Where an entry's mask file is, as `maskPath(_:promptsFile:)` says for a path: the name as
    /// written when absolute, else beside the prompts file at `promptsFile`.
    public static func maskURL(_ name: String, promptsFile: URL) -> URL {
        name.hasPrefix("/") ? URL(fileURLWithPath: name) : promptsFile.deletingLastPathComponent().appendingPathComponent(name)
    }
}
