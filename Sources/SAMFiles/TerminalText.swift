/// Text from files (tensor and dataset names, paths, manifest strings) made safe to print: control
/// characters and bidirectional overrides are shown as escapes, so a name cannot move the cursor,
/// recolour or clear the terminal, or display reversed (`\u{202E}`), when a tool prints it.
package enum TerminalText {
    /// `text` with every C0/C1 control, DEL, bidi control and line/paragraph separator escaped
    /// (`\x1b`, `\u{202E}`); with `keepingNewlines`, `\n` stays (a message of several lines).
    package static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0, keepingNewlines: keepingNewlines) }) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar, keepingNewlines: keepingNewlines) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            if scalar.value < 0x100 {
                result += "\\x" + hex(scalar.value, digits: 2)
            } else {
                result += "\\u{" + hex(scalar.value, digits: 4) + "}"
            }
        }
        return result
    }

    static func needsEscape(_ scalar: Unicode.Scalar, keepingNewlines: Bool) -> Bool {
        switch scalar.value {
        case 0x0A: return !keepingNewlines
        case 0x00...0x1F, 0x7F...0x9F: return true
        // Bidi marks, embeddings, overrides and isolates; line and paragraph separators.
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: return true
        default: return false
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: false)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
