/// Text as a JSON string literal, for the JSON this target writes by hand (upstream's key order).
package enum JSONText {
    /// A JSON string: quotes, backslashes and control characters escaped, other text as is (UTF-8).
    package static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u" + String(scalar.value, radix: 16).leftPaddedHex(4)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

private extension String {
    func leftPaddedHex(_ length: Int) -> String { count >= length ? self : String(repeating: "0", count: length - count) + self }
}
