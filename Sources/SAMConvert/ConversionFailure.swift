/// A conversion that cannot go on; the message names the file (and tensor) at fault.
public struct ConversionFailure: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
