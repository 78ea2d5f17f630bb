import Foundation
import SAMFiles

extension ModelFile {
    /// Loads the `.samw` model at a file URL, as `load(_:verifyingChecksums:)` loads a path. A URL
    /// that is not a file URL (https://...) throws `ModelFileError.format` (`.unreadable`) naming
    /// it; nothing is fetched.
    public static func load(contentsOf url: URL, verifyingChecksums: Bool = true) throws(ModelFileError) -> LoadedModel {
        guard url.isFileURL else {
            throw .format(FormatError(.unreadable, file: url.absoluteString, "not a file URL: a model is read from a local file only"))
        }
        return try load(url.path, verifyingChecksums: verifyingChecksums)
    }
}
