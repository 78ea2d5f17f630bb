import Foundation
import SAMImage

extension VideoFile {
    /// Opens the video file at a file URL and decodes it once, as `init(_:limits:cacheBytes:)` opens
    /// a path. A URL that is not a file URL (https://...) throws `VideoFileError` (`.unreadable`)
    /// naming it; nothing is fetched.
    public convenience init(contentsOf url: URL, limits: ImageLimits = .default, cacheBytes: Int = 64 << 20) throws(VideoFileError) {
        guard url.isFileURL else {
            throw VideoFileError(.unreadable, file: url.absoluteString, "not a file URL: a video is read from a local file only")
        }
        try self.init(url.path, limits: limits, cacheBytes: cacheBytes)
    }
}
