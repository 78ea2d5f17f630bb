import SAMTensor

enum TensorListing {
    static func print(title: String, tensor: Tensor) {
        Console.line(title)
        Console.line("  dtype \(tensor.dtype)  shape \(Shape.text(tensor.shape))  \(tensor.byteCount) bytes")
        Console.line("  " + statsText(tensor))
    }

    static func statsText(_ tensor: Tensor) -> String {
        let stats = streamingSummary(tensor)
        return "min \(format(stats.min))  max \(format(stats.max))  mean \(format(stats.mean))"
    }

    /// Elements summarised per step.
    static let window = 1 << 22

    /// `Tensor.summary` a window at a time; each window's pages are handed back to the kernel once
    /// summarised (`MADV_PAGEOUT`: file-backed pages are dropped and re-read if ever needed, anonymous
    /// ones are left alone), so a tensor mapped from a multi-GB file never sits in memory whole.
    static func streamingSummary(_ tensor: Tensor) -> (min: Double, max: Double, mean: Double) {
        let count = tensor.elementCount, size = tensor.dtype.byteSize
        guard count > window else { return tensor.summary() }
        var low = Double.infinity, high = -Double.infinity, sum = 0.0
        var start = 0
        while start < count {
            let end = min(count, start + window)
            let bytes = UnsafeRawBufferPointer(rebasing: tensor.storage.bytes[(start * size)..<(end * size)])
            let part = Tensor(dtype: tensor.dtype, shape: [end - start], checkedStorage: TensorStorage(borrowing: bytes, owner: tensor.storage))
            let stats = part.summary()
            if stats.mean.isNaN { return (.nan, .nan, .nan) }
            low = Swift.min(low, stats.min)
            high = Swift.max(high, stats.max)
            sum += stats.mean * Double(end - start)
            PageRelease.pageOut(bytes)
            start = end
        }
        return (low, high, sum / Double(count))
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
