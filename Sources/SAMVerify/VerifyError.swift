/// Why a verification could not be carried out at all: bad input or usage (exit status 2).
/// Per-case problems (a missing or non-finite reference file) are not thrown; they are reported
/// on the case with status `bad_input`, so every other case still runs.
public struct VerifyError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Code: String, Sendable, Codable {
        /// The model file does not exist.
        case missingModel = "missing_model"
        /// The model file exists but is not a loadable .samw model.
        case badModel = "bad_model"
        /// The references folder is missing, unreadable, or not in a layout samverify knows.
        case unreadableReferences = "unreadable_references"
        /// The reference set holds no case samverify can run.
        case noCases = "no_cases"
        /// `--case` named a case the reference set does not have.
        case unknownCase = "unknown_case"
        /// A command-line value is out of range (a negative or non-finite tolerance).
        case usage
        /// Writing the JSON or JUnit report failed.
        case writeFailed = "write_failed"
        /// A report's name is taken by something it may not replace (a directory, device, link) or is
        /// one of the run's inputs (the model, a reference file); nothing was written.
        case outputRefused = "output_refused"
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Always 2: bad input or usage.
    public var exitCode: Int32 { 2 }

    public var description: String { "\(message) [\(code.rawValue)]" }
}
