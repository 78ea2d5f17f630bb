/// A strict RFC 8259 JSON parser from UTF-8 bytes to `JSONValue`, for .samw headers.
///
/// Foundation's JSONDecoder took 1.2-1.7 ms for MobileSAM's 51 KB header (327 table rows): a
/// fifth of a model load. This reads the same documents in one pass over the bytes. It refuses
/// what JSONDecoder refuses (bad UTF-8, control characters in strings, lone surrogates, leading
/// zeros, trailing commas or content) and also duplicate object keys; nesting is limited to
/// `maximumDepth`, so hostile input cannot exhaust the stack.
package struct JSONParser {
    package static let maximumDepth = 256

    package struct Failure: Error, CustomStringConvertible, Equatable {
        package let offset: Int
        package let reason: String
        /// The member name an object holds twice, when that is the failure, and that object's depth (0: the top level).
        package var duplicateKey: String? = nil
        package var duplicateDepth = 0
        package var description: String { "\(reason) at byte \(offset)" }
    }

    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    private init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The one JSON value `bytes` hold (whitespace around it allowed, nothing else).
    package static func parse(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes)
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.position == bytes.count else { throw parser.failure("content after the JSON value") }
        return value
    }

    private func failure(_ reason: String) -> Failure { Failure(offset: position, reason: reason) }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
    }

    private mutating func expect(_ literal: StaticString) throws(Failure) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - position >= count,
              (0..<count).allSatisfy({ bytes[position + $0] == literal.utf8Start[$0] }) else {
            throw failure("expected \(literal)")
        }
        position += count
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard depth < Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth)") }
        skipWhitespace()
        guard let byte = current else { throw failure("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw failure("unexpected character")
        }
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        position += 1  // {
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") { position += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw failure("expected a member name") }
            let keyStart = position
            let key = try string()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected ':'") }
            position += 1
            let member = try value(depth: depth + 1)
            guard members.updateValue(member, forKey: key) == nil else {
                throw Failure(offset: keyStart, reason: "member \"\(key)\" appears twice", duplicateKey: key, duplicateDepth: depth)
            }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return .object(members)
            default: throw failure("expected ',' or '}'")
            }
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        position += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") { position += 1; return .array(elements) }
        while true {
            elements.append(try value(depth: depth + 1))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return .array(elements)
            default: throw failure("expected ',' or ']'")
            }
        }
    }

    /// A string from its opening quote; the runs between escapes are validated as UTF-8.
    private mutating func string() throws(Failure) -> String {
        position += 1  // "
        var result = ""
        var runStart = position
        while true {
            guard let byte = current else { throw failure("unterminated string") }
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                try appendRun(from: runStart, to: &result)
                position += 1
                if byte == UInt8(ascii: "\"") { return result }
                try appendEscape(to: &result)
                runStart = position
            } else if byte < 0x20 {
                throw failure("control character in a string")
            } else {
                position += 1
            }
        }
    }

    private func appendRun(from start: Int, to result: inout String) throws(Failure) {
        guard position > start else { return }
        guard let run = String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self) else {
            throw Failure(offset: start, reason: "invalid UTF-8 in a string")
        }
        result += run
    }

    private mutating func appendEscape(to result: inout String) throws(Failure) {
        guard let byte = current else { throw failure("unterminated escape") }
        position += 1
        switch byte {
        case UInt8(ascii: "\""): result.append("\"")
        case UInt8(ascii: "\\"): result.append("\\")
        case UInt8(ascii: "/"): result.append("/")
        case UInt8(ascii: "b"): result.append("\u{08}")
        case UInt8(ascii: "f"): result.append("\u{0C}")
        case UInt8(ascii: "n"): result.append("\n")
        case UInt8(ascii: "r"): result.append("\r")
        case UInt8(ascii: "t"): result.append("\t")
        case UInt8(ascii: "u"):
            let unit = try hexUnit()
            var scalar: Unicode.Scalar?
            if (0xD800...0xDBFF).contains(unit) {
                // A high surrogate must be followed by an escaped low one.
                guard bytes.count - position >= 2, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                    throw failure("lone surrogate in a \\u escape")
                }
                position += 2
                let low = try hexUnit()
                guard (0xDC00...0xDFFF).contains(low) else { throw failure("lone surrogate in a \\u escape") }
                scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
            } else {
                scalar = Unicode.Scalar(unit)  // nil for a lone low surrogate
            }
            guard let scalar else { throw failure("lone surrogate in a \\u escape") }
            result.unicodeScalars.append(scalar)
        default:
            throw failure("unknown escape")
        }
    }

    private mutating func hexUnit() throws(Failure) -> UInt32 {
        guard bytes.count - position >= 4 else { throw failure("short \\u escape") }
        var unit: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("bad hex digit in a \\u escape")
            }
            unit = unit << 4 | UInt32(digit)
            position += 1
        }
        return unit
    }

    /// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?, converted by the standard library's
    /// correctly rounded Double parser.
    private mutating func number() throws(Failure) -> Double {
        let start = position
        if current == UInt8(ascii: "-") { position += 1 }
        func digits(_ parser: inout JSONParser) -> Int {
            let first = parser.position
            while let byte = parser.current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { parser.position += 1 }
            return parser.position - first
        }
        let integerStart = position
        let integerDigits = digits(&self)
        guard integerDigits > 0 else { throw failure("expected a digit") }
        guard integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
            throw Failure(offset: integerStart, reason: "leading zero in a number")
        }
        if current == UInt8(ascii: ".") {
            position += 1
            guard digits(&self) > 0 else { throw failure("expected a digit after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard digits(&self) > 0 else { throw failure("expected a digit in the exponent") }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw Failure(offset: start, reason: "number \(text) is out of range")
        }
        return value
    }
}
