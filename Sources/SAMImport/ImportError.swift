import SAMFiles
import SAMFormats
import SAMTensor

/// Why an import was refused. Always names the file, and the tensor when there is one;
/// merge conflicts name both files.
public struct ImportError: Error, CustomStringConvertible, Equatable {
    public enum Code: String, Sendable {
        /// A reader refused the file (see `formatError`).
        case unreadable
        /// The file's kind cannot be told from its name (.onnx, .h5/.hdf5, .pth/.pt, .safetensors, .bin).
        case unsupportedInput
        /// Weight-like tensors that no rule maps (listed in `unmapped`).
        case unmappedTensors
        /// Two sources give different values or shapes for one canonical tensor.
        case conflictingTensors
        /// A layout rule's precondition does not hold (shape, inconsistent bias table, dtype).
        case invalidLayout
        /// BatchNorm statistics without their convolution weight, or incomplete statistics.
        case incompleteBatchNorm
        /// A raw blob whose byte count does not fit the shape the other weights imply.
        case sizeMismatch
        /// A raw blob whose shape cannot be told: nothing imported gives its channel count.
        case missingContext
        /// Two files state different facts (image-embedding size, embedding width).
        case conflictingFacts
        /// A stored tensor named as a float weight holds integers, bools or strings.
        case wrongElementType
        /// A node the importer reads breaks its ONNX operator's type constraints at the file's opset:
        /// an input or a type attribute of a type the operator does not allow, inputs sharing a type
        /// variable that disagree, or an operator the opset does not have (`ONNXTypeChecks`).
        case invalidOperatorTypes
        /// Quantized weights ONNX allows but the importer does not dequantize: int4, int16 or float8
        /// data, bfloat16 scales, blocked quantization.
        case unsupportedQuantization
    }

    public let code: Code
    public let file: String
    public let tensor: String?
    /// The other file of a merge conflict.
    public let otherFile: String?
    /// Unmapped tensors (code `.unmappedTensors`), one line each.
    public let unmapped: [UnmappedTensor]
    public let message: String
    /// The reader's error behind `.unreadable`.
    public let formatError: FormatError?

    public init(_ code: Code, file: String, tensor: String? = nil, otherFile: String? = nil,
                unmapped: [UnmappedTensor] = [], formatError: FormatError? = nil, _ message: String) {
        self.code = code
        self.file = file
        self.tensor = tensor
        self.otherFile = otherFile
        self.unmapped = unmapped
        self.formatError = formatError
        self.message = message
    }

    /// Wraps a reader's error.
    init(_ error: FormatError) {
        self.init(.unreadable, file: error.file, tensor: error.tensor, formatError: error, error.message)
    }

    /// The reader's own kind (`corrupt`, `unsafePath` ...) when a reader refused the file, else this error's code.
    public var kind: String { code == .unreadable ? formatError?.code.rawValue ?? code.rawValue : code.rawValue }

    /// One line per problem; names from the files are escaped (`TerminalText`).
    public var description: String {
        var text = TerminalText.escaped(file)
        if let otherFile { text += " and \(TerminalText.escaped(otherFile))" }
        if let tensor { text += ": tensor '\(TerminalText.escaped(tensor))'" }
        text += ": \(TerminalText.escaped(message)) [\(kind)]"
        for entry in unmapped.prefix(40) { text += "\n  " + TerminalText.escaped(entry.description) }
        if unmapped.count > 40 { text += "\n  ... \(unmapped.count - 40) more" }
        return text
    }
}

/// A stored tensor that no rule maps: reported, never silently dropped.
public struct UnmappedTensor: Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let name: String
    /// Element type as the file states it (`f32`, `f16`, `bfloat16` ...).
    public let dtype: String
    public let shape: [Int]
    /// What the importer saw (its consumers), to help write the missing rule.
    public let context: String

    public var description: String { "\(name) \(dtype) \(Shape.text(shape)): \(context)" }
}
