/// `batched_mask_to_box` for one mask: the XYXY box around the set pixels, with *inclusive* maxima
/// (x1 is the last set column, y1 the last set row), and [0, 0, 0, 0] for an empty mask.
/// (Upstream returns int64 boxes for bool masks; a batch is just this per mask.)
///
/// One pass at most: each row is scanned from the left to its first set pixel and from the right
/// to its last, eight bytes at a time.
// ref: segment_anything/utils/amg.py batched_mask_to_box
package func maskToBox(_ mask: BinaryMask) -> PixelBox {
    let width = mask.width
    let height = mask.height
    guard width > 0, height > 0 else { return .zero }
    return mask.pixels.withUnsafeBufferPointer { buffer -> PixelBox in
        guard let base = buffer.baseAddress else { return .zero }
        var top = -1
        var bottom = -1
        var left = Int.max
        var right = -1
        for row in 0..<height {
            let rowStart = base + row * width
            guard let first = firstSetIndex(rowStart, width) else { continue }
            let last = lastSetIndex(rowStart, width)
            if top < 0 { top = row }
            bottom = row
            left = min(left, first)
            right = max(right, last)
        }
        guard top >= 0 else { return .zero }
        return PixelBox(x0: left, y0: top, x1: right, y1: bottom)
    }
}

extension BinaryMask {
    /// `maskToBox(self)`: the box around the set pixels (inclusive maxima), [0, 0, 0, 0] if empty.
    package var boundingBox: PixelBox { maskToBox(self) }
}

/// Index of the first non-zero byte among `count`, or nil.
@inline(__always)
func firstSetIndex(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int? {
    let raw = UnsafeRawPointer(bytes)
    var i = 0
    while i + 8 <= count {
        let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        if word != 0 { return i + word.trailingZeroBitCount / 8 }
        i += 8
    }
    while i < count {
        if bytes[i] != 0 { return i }
        i += 1
    }
    return nil
}

/// Index of the last non-zero byte among `count`; call only when there is one (else -1).
@inline(__always)
func lastSetIndex(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int {
    let raw = UnsafeRawPointer(bytes)
    var end = count
    while end - 8 >= 0 {
        let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: end - 8, as: UInt64.self))
        if word != 0 { return end - 1 - word.leadingZeroBitCount / 8 }
        end -= 8
    }
    while end > 0 {
        end -= 1
        if bytes[end] != 0 { return end }
    }
    return -1
}
