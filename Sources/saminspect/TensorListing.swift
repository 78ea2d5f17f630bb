import SAMTensor

enum TensorListing {
    static func print(title: String, tensor: Tensor) {
        Swift.print(title)
        Swift.print("  dtype \(tensor.dtype)  shape \(Shape.text(tensor.shape))  \(tensor.byteCount) bytes")
        Swift.print("  " + statsText(tensor))
    }

    static func statsText(_ tensor: Tensor) -> String {
        let stats = tensor.summary()
        return "min \(format(stats.min))  max \(format(stats.max))  mean \(format(stats.mean))"
    }

    static func format(_ value: Double) -> String {
        if value.isNaN { return "nan" }
        if value == value.rounded() && abs(value) < 1e12 { return String(Int64(value)) }
        let text = String(value)
        return text.count > 12 ? String(format6(value)) : text
    }

    /// Six significant digits without Foundation.
    private static func format6(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude != 0 && (magnitude < 1e-3 || magnitude >= 1e6) {
            var exponent = 0
            var mantissa = magnitude
            while mantissa >= 10 { mantissa /= 10; exponent += 1 }
            while mantissa < 1 { mantissa *= 10; exponent -= 1 }
            return (value < 0 ? "-" : "") + String(Double(Int((mantissa * 1e5).rounded())) / 1e5) + "e\(exponent)"
        }
        return String(Double(Int((value * 1e6).rounded())) / 1e6)
    }

    /// Pads `text` on the right to `width` characters.
    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
