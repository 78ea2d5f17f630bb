import Foundation

extension EmbeddingsProvenance {
    /// `image_embeddings.json` beside `image_embeddings.npy`, as `sidecarPath(forEmbeddings:)` names
    /// it for a path: the sidecar of the embeddings file at `url`.
    public static func sidecarURL(forEmbeddings url: URL) -> URL {
        url.pathExtension == "npy" ? url.deletingPathExtension().appendingPathExtension("json") : url.appendingPathExtension("json")
    }

    /// Reads the sidecar at a file URL, as `read(sidecar:)` reads a path; nil when there is none. A
    /// URL that is not a file URL (https://...) throws `PipelineError.invalidState` naming it.
    public static func read(sidecar url: URL) throws(PipelineError) -> EmbeddingsProvenance? {
        guard url.isFileURL else {
            throw .invalidState("embeddings record \(url.absoluteString) is not a file URL: a record is read from a local file only")
        }
        return try read(sidecar: url.path)
    }
}
