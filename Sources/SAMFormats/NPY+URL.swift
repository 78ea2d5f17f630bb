import Foundation
import SAMFiles
import SAMTensor

extension NPY {
    /// Reads the `.npy` file at a file URL, as `read(_:)` reads a path. A URL that is not a file URL
    /// (https://...) throws `FormatError` (`.unreadable`) naming it; nothing is fetched.
    public static func read(contentsOf url: URL) throws(FormatError) -> Tensor {
        try read(FormatError.localPath(of: url, reading: "a .npy file"))
    }

    /// Writes `tensor` at a file URL, atomically, as `write(_:to:policy:)` writes to a path. A URL
    /// that is not a file URL throws `FormatError` (`.outputRefused`) naming it; nothing is written.
    public static func write(_ tensor: Tensor, to url: URL, policy: OutputPolicy = .replace) throws(FormatError) {
        guard url.isFileURL else {
            throw FormatError(.outputRefused, file: url.absoluteString, "not a file URL: a .npy file is written to a local file only")
        }
        try write(tensor, to: url.path, policy: policy)
    }
}
