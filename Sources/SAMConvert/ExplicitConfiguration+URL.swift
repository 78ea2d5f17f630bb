import Foundation

extension ExplicitConfiguration {
    /// Reads the config file at a file URL, as `init(contentsOf:)` reads a path. A URL that is not a
    /// file URL (https://...) throws a `ConversionFailure` naming it; nothing is fetched.
    public init(contentsOf url: URL) throws(ConversionFailure) {
        guard url.isFileURL else {
            throw ConversionFailure("\(url.absoluteString): not a file URL: a config is read from a local file only")
        }
        try self.init(contentsOf: url.path)
    }
}
