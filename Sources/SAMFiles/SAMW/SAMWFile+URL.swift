import Foundation

extension SAMWFile {
    /// Maps the `.samw` file at a file URL and checks it, as `init(path:)` does for a path. A URL
    /// that is not a file URL (https://...) throws `FormatError` (`.unreadable`) naming it; nothing
    /// is fetched.
    public convenience init(contentsOf url: URL) throws(FormatError) {
        guard url.isFileURL else {
            throw FormatError(.unreadable, file: url.absoluteString, "not a file URL: a model file is read from a local file only")
        }
        try self.init(path: url.path)
    }
}
