/// A typed error for anything a reader refuses: it always names the file, and the tensor where there is one.
public struct FormatError: Error, CustomStringConvertible, Equatable {
    /// What kind of failure it was; the raw value is printed in brackets after the message.
    public enum Code: String, Sendable {
        /// The file cannot be opened or read (missing, permissions, a folder), or is named by a URL
        /// that is not a file URL.
        case unreadable
        /// The file ends before the data it declares.
        case truncated
        /// The bytes are not a valid file of the expected format.
        case corrupt
        /// Valid, but uses a feature this reader does not handle (big-endian, Fortran order, a dtype).
        case unsupported
        /// Declared and actual sizes disagree (blob byte count, element count vs shape).
        case sizeMismatch
        /// A tensor or dataset that was asked for is not there.
        case missingTensor
        /// Data that would come from outside the file given: an ONNX external-data path that is absolute,
        /// climbs out of the model folder or escapes it through a link; an HDF5 external link, external
        /// storage or virtual dataset.
        case unsafePath
        /// The file is larger or more deeply structured than a reader accepts (nesting depth, object or
        /// chunk counts, a dataset inflating far beyond its stored bytes): refused before the work.
        case limitExceeded
        /// The machine cannot provide the memory a tensor of the file needs, though the file is within
        /// every limit: reported naming the file and tensor instead of ending the process.
        case outOfMemory = "out_of_memory"
        /// Two entries of one file claim the same name (two initializers, flat and nested HDF5 spellings).
        case duplicateName
        /// A pickle names a Python global that a state dict does not need (`os.system`): refused
        /// when the opcode naming it is read, before anything is built.
        case refusedGlobal
        /// Writing an output failed.
        case writeFailed
        /// An output's name is taken by something an output may not replace (a directory, a device,
        /// a link, an existing file without --force), is one of the run's inputs, or is a URL that is
        /// not a file URL; nothing was touched.
        case outputRefused = "output_refused"
    }

    /// What kind of failure it was.
    public let code: Code
    /// The file the error is about.
    public let file: String
    /// The tensor or dataset within the file, when the error is about one.
    public let tensor: String?
    /// What is wrong, with the values involved.
    public let message: String

    /// An error of kind `code` about `file` (and `tensor`), saying `message`.
    public init(_ code: Code, file: String, tensor: String? = nil, _ message: String) {
        self.code = code
        self.file = file
        self.tensor = tensor
        self.message = message
    }

    /// One line; names and text from files are escaped (`TerminalText`), so printing it is safe.
    public var description: String {
        let file = TerminalText.escaped(file), message = TerminalText.escaped(message)
        if let tensor { return "\(file): tensor '\(TerminalText.escaped(tensor))': \(message) [\(code.rawValue)]" }
        return "\(file): \(message) [\(code.rawValue)]"
    }
}
