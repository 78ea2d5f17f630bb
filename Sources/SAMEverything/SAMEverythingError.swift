/// What every throwing function of SAMEverything throws: malformed RLE (a bad COCO string, counts
/// that do not add up to height × width), sizes that do not match, arguments upstream would reject.
public struct SAMEverythingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A sentence naming what was wrong, with the values involved.
    public let message: String

    /// An error saying `message`.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// Checks a width and height are non-negative and their product fits an Int.
@inline(__always)
func checkedPixelCount(width: Int, height: Int, what: String) throws(SAMEverythingError) -> Int {
    guard width >= 0, height >= 0 else {
        throw SAMEverythingError("\(what): width \(width) and height \(height) must not be negative")
    }
    let (count, overflow) = width.multipliedReportingOverflow(by: height)
    guard !overflow else {
        throw SAMEverythingError("\(what): width \(width) × height \(height) overflows")
    }
    return count
}
