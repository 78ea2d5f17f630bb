import Foundation
import SAMFiles
import SAMTensor

// The readers at file URLs, as their path forms read paths. A URL that is not a file URL
// (https://...) throws `FormatError` (`.unreadable`) naming it; nothing is fetched.

extension FormatError {
    /// `url`'s path when it is a file URL; else the error naming the URL and what would have been read.
    static func localPath(of url: URL, reading what: String) throws(FormatError) -> String {
        guard url.isFileURL else {
            throw FormatError(.unreadable, file: url.absoluteString, "not a file URL: \(what) is read from a local file only")
        }
        return url.path
    }
}

extension ONNXModel {
    /// The ONNX model at a file URL; see `init(path:)`.
    public convenience init(contentsOf url: URL) throws(FormatError) {
        try self.init(path: FormatError.localPath(of: url, reading: "an ONNX model"))
    }
}

extension SafetensorsFile {
    /// The safetensors file at a file URL; see `init(path:)`.
    public convenience init(contentsOf url: URL) throws(FormatError) {
        try self.init(path: FormatError.localPath(of: url, reading: "a safetensors file"))
    }
}

extension PyTorchCheckpoint {
    /// The PyTorch checkpoint at a file URL; see `init(path:limits:)`.
    public convenience init(contentsOf url: URL, limits: PyTorchLimits = .default) throws(FormatError) {
        try self.init(path: FormatError.localPath(of: url, reading: "a PyTorch checkpoint"), limits: limits)
    }
}

extension HDF5File {
    /// The HDF5 file at a file URL; see `init(path:limits:)`.
    public convenience init(contentsOf url: URL, limits: HDF5Limits = .default) throws(FormatError) {
        try self.init(path: FormatError.localPath(of: url, reading: "an HDF5 file"), limits: limits)
    }
}

extension RawBlob {
    /// The raw blob at a file URL; see `read(_:dtype:shape:tensorName:)`.
    public static func read(contentsOf url: URL, dtype: DType, shape: [Int], tensorName: String? = nil) throws(FormatError) -> Tensor {
        try read(FormatError.localPath(of: url, reading: "a raw tensor blob"), dtype: dtype, shape: shape, tensorName: tensorName)
    }
}
