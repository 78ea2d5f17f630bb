import Foundation

extension FrameFolder {
    /// Lists the folder at a file URL, as `init(_:)` lists a path: the same frames, in the same
    /// order, refused for the same reasons. A URL that is not a file URL (https://...) throws
    /// `FrameFolderError` (`.notAFolder`) naming it; nothing is fetched.
    public init(contentsOf url: URL) throws(FrameFolderError) {
        guard url.isFileURL else {
            throw FrameFolderError(.notAFolder, file: url.absoluteString, "not a file URL: video frames are read from a local folder only")
        }
        try self.init(url.path)
    }
}
