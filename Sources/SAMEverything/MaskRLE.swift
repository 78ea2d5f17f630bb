/// Upstream's uncompressed RLE (`{"size": [h, w], "counts": [...]}`, the "uncompressed_rle" output
/// mode and what the generator keeps every mask as): run lengths over the **column-major**
/// (Fortran) flattening of the mask, alternating 0-runs and 1-runs and starting with a 0-run, so a
/// mask whose first pixel (row 0, column 0) is set starts with a count of 0. An all-zero mask is
/// [h * w], an all-one mask [0, h * w].
///
/// SAM 2's `mask_to_rle_pytorch`, `rle_to_mask` and `area_from_rle` are the same functions as SAM's.
public struct UncompressedRLE: Sendable, Equatable, CustomStringConvertible {
    /// Rows of the mask, in pixels.
    public var height: Int
    /// Columns of the mask, in pixels.
    public var width: Int
    /// Run lengths, column-major, the first one counting zeros.
    public var counts: [Int]

    /// An RLE as given; `mask()` and the COCO encoder check it.
    public init(height: Int, width: Int, counts: [Int]) {
        self.height = height
        self.width = width
        self.counts = counts
    }

    /// `mask_to_rle_pytorch` of one mask. One pass over the mask in row order (strips of 64
    /// columns, eight bytes at a time, rows compared with the row above), no per-pixel work where
    /// a row repeats the one above. (A mask with no pixels gives no counts; upstream cannot encode one.)
    // ref: segment_anything/utils/amg.py mask_to_rle_pytorch
    public init(mask: BinaryMask) {
        self.init(height: mask.height, width: mask.width, counts: [])
        encode(mask, columnOffset: 0, rowOffset: 0)
    }

    /// `mask_to_rle_pytorch(uncrop_masks(mask, cropBox, originalHeight, originalWidth))` without
    /// building the padded mask: the RLE of `mask` placed at the crop box's corner in an
    /// otherwise empty `originalWidth` × `originalHeight` image, in time proportional to the crop.
    ///
    /// - Throws: if the mask's size is not the crop box's, or the box is not inside the image.
    // ref: segment_anything/utils/amg.py uncrop_masks, mask_to_rle_pytorch
    package init(mask: BinaryMask, uncroppedFrom cropBox: PixelBox, originalHeight: Int, originalWidth: Int) throws(SAMEverythingError) {
        try checkCropPlacement(mask: mask, cropBox: cropBox, originalHeight: originalHeight, originalWidth: originalWidth)
        self.init(height: originalHeight, width: originalWidth, counts: [])
        encode(mask, columnOffset: cropBox.x0, rowOffset: cropBox.y0)
    }

    /// `area_from_rle`: the sum of the 1-runs (every second count, from the second).
    // ref: segment_anything/utils/amg.py area_from_rle
    public var area: Int {
        var total = 0
        var index = 1
        while index < counts.count {
            total &+= counts[index]
            index += 2
        }
        return total
    }

    /// `rle_to_mask`: the row-major mask.
    ///
    /// - Throws: if a count is negative or the counts do not add up to height × width (upstream
    ///   would leave pixels uninitialised or silently drop the excess).
    // ref: segment_anything/utils/amg.py rle_to_mask
    public func mask() throws(SAMEverythingError) -> BinaryMask {
        try validate()
        var pixels = [UInt8](repeating: 0, count: height * width)
        let height = self.height
        let width = self.width
        pixels.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var position = 0
            for (index, count) in counts.enumerated() {
                defer { position += count }
                guard index % 2 == 1, count > 0 else { continue }
                // A 1-run from `position`, down the columns (column-major), into a row-major buffer.
                var column = position / height
                var row = position % height
                var remaining = count
                while remaining > 0 {
                    let rows = min(height - row, remaining)
                    var target = base + row * width + column
                    for _ in 0..<rows {
                        target.pointee = 1
                        target += width
                    }
                    remaining -= rows
                    column += 1
                    row = 0
                }
            }
        }
        return BinaryMask(unchecked: width, height: height, pixels: pixels)
    }

    /// Checks the counts describe a height × width mask.
    package func validate() throws(SAMEverythingError) {
        let total = try checkedPixelCount(width: width, height: height, what: "RLE")
        var sum = 0
        for (index, count) in counts.enumerated() {
            guard count >= 0 else {
                throw SAMEverythingError("RLE count \(index) is negative (\(count))")
            }
            let (next, overflow) = sum.addingReportingOverflow(count)
            guard !overflow, next <= total else {
                throw SAMEverythingError("RLE counts add up to more than \(height)x\(width) = \(total) pixels (past count \(index))")
            }
            sum = next
        }
        guard sum == total else {
            throw SAMEverythingError("RLE counts add up to \(sum), not \(height)x\(width) = \(total) pixels")
        }
    }

    /// `UncompressedRLE(<height>x<width>, <n> counts)`.
    public var description: String { "UncompressedRLE(\(height)x\(width), \(counts.count) counts)" }

    /// Appends the runs of `mask` placed with its top-left pixel at (columnOffset, rowOffset) of a
    /// `width` × `height` image of zeros. `counts` must be empty.
    private mutating func encode(_ mask: BinaryMask, columnOffset: Int, rowOffset: Int) {
        let imageHeight = height
        let total = height * width
        guard total > 0 else { return }
        var writer = RunWriter()
        writer.counts.reserveCapacity(64)
        let maskWidth = mask.width
        let maskHeight = mask.height
        if maskWidth > 0, maskHeight > 0 {
            let rowsBelow = imageHeight - rowOffset - maskHeight
            mask.pixels.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                // Per column of the strip, the rows where the column changes value (row y != row y - 1).
                var changes = [[Int32]](repeating: [], count: RunWriter.stripWidth)
                var stripStart = 0
                while stripStart < maskWidth {
                    let stripWidth = min(RunWriter.stripWidth, maskWidth - stripStart)
                    for column in 0..<stripWidth { changes[column].removeAll(keepingCapacity: true) }
                    if maskHeight > 1 {
                        collectChanges(base: base, maskWidth: maskWidth, maskHeight: maskHeight,
                                       stripStart: stripStart, stripWidth: stripWidth, into: &changes)
                    }
                    for column in 0..<stripWidth {
                        let columnStart = (columnOffset + stripStart + column) * imageHeight + rowOffset
                        // Rows above the crop are zeros.
                        if rowOffset > 0, writer.value == 1 { writer.transition(at: columnStart - rowOffset) }
                        if base[stripStart + column] != writer.value { writer.transition(at: columnStart) }
                        for row in changes[column] { writer.transition(at: columnStart + Int(row)) }
                        // Rows below the crop are zeros.
                        if rowsBelow > 0, writer.value == 1 { writer.transition(at: columnStart + maskHeight) }
                    }
                    stripStart += stripWidth
                }
            }
            // Columns right of the crop, if any, are zeros.
            if writer.value == 1, columnOffset + maskWidth < width {
                writer.transition(at: (columnOffset + maskWidth) * imageHeight)
            }
        }
        writer.finish(total: total)
        counts = writer.counts
    }
}

/// Builds counts from the positions (column-major) where the value flips.
private struct RunWriter {
    static let stripWidth = 64
    var counts: [Int] = []
    var runStart = 0
    var value: UInt8 = 0

    @inline(__always)
    mutating func transition(at position: Int) {
        counts.append(position - runStart)
        runStart = position
        value ^= 1
    }

    mutating func finish(total: Int) {
        counts.append(total - runStart)
    }
}

/// For rows 1..<maskHeight of the strip, records each column whose pixel differs from the row
/// above. Eight columns per XOR; the pixels are 0/1, so each differing byte is a single bit.
@inline(__always)
private func collectChanges(base: UnsafePointer<UInt8>, maskWidth: Int, maskHeight: Int,
                            stripStart: Int, stripWidth: Int, into changes: inout [[Int32]]) {
    let raw = UnsafeRawPointer(base)
    let wordCount = stripWidth / 8
    for row in 1..<maskHeight {
        let current = (row * maskWidth + stripStart)
        let above = current - maskWidth
        for word in 0..<wordCount {
            var difference = raw.loadUnaligned(fromByteOffset: current + word * 8, as: UInt64.self)
                ^ raw.loadUnaligned(fromByteOffset: above + word * 8, as: UInt64.self)
            difference = UInt64(littleEndian: difference)
            while difference != 0 {
                let column = word * 8 + difference.trailingZeroBitCount / 8
                changes[column].append(Int32(truncatingIfNeeded: row))
                difference &= difference &- 1
            }
        }
        var column = wordCount * 8
        while column < stripWidth {
            if base[current + column] != base[above + column] {
                changes[column].append(Int32(truncatingIfNeeded: row))
            }
            column += 1
        }
    }
}

/// Checks `mask` is the size of `cropBox` and the box lies in the original image, as
/// `uncrop_masks` assumes.
func checkCropPlacement(mask: BinaryMask, cropBox: PixelBox, originalHeight: Int, originalWidth: Int) throws(SAMEverythingError) {
    _ = try checkedPixelCount(width: originalWidth, height: originalHeight, what: "original image")
    guard cropBox.x0 >= 0, cropBox.y0 >= 0, cropBox.x1 <= originalWidth, cropBox.y1 <= originalHeight,
          cropBox.x0 <= cropBox.x1, cropBox.y0 <= cropBox.y1 else {
        throw SAMEverythingError("crop box \(cropBox) is not inside the \(originalWidth)x\(originalHeight) image")
    }
    guard mask.width == cropBox.x1 - cropBox.x0, mask.height == cropBox.y1 - cropBox.y0 else {
        throw SAMEverythingError("a \(mask.width)x\(mask.height) mask does not fit crop box \(cropBox)")
    }
}
