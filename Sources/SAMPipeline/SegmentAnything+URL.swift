import Foundation

extension SegmentAnything {
    /// Loads the `.samw` model at a file URL, as `init(modelPath:verifyingChecksums:)` loads a path
    /// (`Segmenter.init(contentsOf:verifyingChecksums:)`). A URL that is not a file URL throws
    /// `PipelineError.invalidState` naming it.
    public convenience init(contentsOf url: URL, verifyingChecksums: Bool = true) throws(PipelineError) {
        self.init(segmenter: try Segmenter(contentsOf: url, verifyingChecksums: verifyingChecksums))
    }
}
