import Foundation

extension Verifier {
    /// Verifies the `.samw` model at a file URL against the reference set folder at another, as
    /// `verify(modelPath:referencesPath:tolerancesFile:...)` does with paths. A URL that is not a file
    /// URL (https://...) throws `.missingModel` or `.unreadableReferences` naming it; nothing is fetched.
    public static func verify(model: URL, references: URL, tolerances: URL? = nil, options: VerifyOptions = VerifyOptions(),
                              progress: (String) -> Void = { _ in },
                              artifacts: ArtifactObserver? = nil) throws(VerifyError) -> VerificationReport {
        guard model.isFileURL else {
            throw VerifyError(.missingModel, "model: \(model.absoluteString) is not a file URL: a model is read from a local file only")
        }
        guard references.isFileURL else {
            throw VerifyError(.unreadableReferences, "references: \(references.absoluteString) is not a file URL: a reference set is read from a local folder only")
        }
        if let tolerances, !tolerances.isFileURL {
            throw VerifyError(.unreadableReferences, "tolerances: \(tolerances.absoluteString) is not a file URL: read from a local file only")
        }
        return try verify(modelPath: model.path, referencesPath: references.path, tolerancesFile: tolerances?.path,
                          options: options, progress: progress, artifacts: artifacts)
    }
}
