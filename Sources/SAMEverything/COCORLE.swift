/// A COCO compressed RLE (`{"size": [h, w], "counts": "..."}`), the "coco_rle" output mode: the
/// same column-major counts as `UncompressedRLE`, written as pycocotools' `rleToString` writes
/// them, so `pycocotools.mask.decode` reads ours and we read its.
///
/// The string format (a LEB128 variant, 5 value bits per character, characters 48...111): from the
/// fourth count on (index > 2, not > 1), each count is written as its difference from the count
/// two before it (the previous run of the same value), which can be negative; a value is split into
/// 5-bit groups, least significant first, each group + 48, with 0x20 set while more groups follow;
/// the last group's 0x10 bit is the sign.
// ref: segment_anything/utils/amg.py coco_encode_rle
// ref: pycocotools/common/maskApi.c rleToString, rleFrString
public struct COCORLE: Sendable, Equatable, CustomStringConvertible {
    /// Rows of the mask, in pixels.
    public var height: Int
    /// Columns of the mask, in pixels.
    public var width: Int
    /// The compressed counts, ASCII.
    public var counts: String

    /// An RLE as given; `mask()` decodes and checks it.
    public init(height: Int, width: Int, counts: String) {
        self.height = height
        self.width = width
        self.counts = counts
    }

    /// `coco_encode_rle(rle)`: pycocotools' `frPyObjects` of the uncompressed RLE, then
    /// `rleToString`. The counts are written as given (pycocotools keeps them as uint32).
    ///
    /// - Throws: if a count is negative or does not fit in uint32.
    public init(_ rle: UncompressedRLE) throws(SAMEverythingError) {
        self.init(height: rle.height, width: rle.width, counts: try COCORLE.encodeCounts(rle.counts))
    }

    /// `rleFrString` then `rle_to_mask`: the mask.
    public func mask() throws(SAMEverythingError) -> BinaryMask {
        try UncompressedRLE(self).mask()
    }

    /// `COCORLE(<height>x<width>, "<counts>")`.
    public var description: String { "COCORLE(\(height)x\(width), \"\(counts)\")" }

    /// `rleToString` of a list of counts.
    package static func encodeCounts(_ counts: [Int]) throws(SAMEverythingError) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(counts.count * 2)
        for (index, count) in counts.enumerated() {
            guard count >= 0, count <= Int(UInt32.max) else {
                throw SAMEverythingError("RLE count \(index) (\(count)) does not fit pycocotools' uint32")
            }
            var value = count
            if index > 2 { value -= counts[index - 2] }
            var more = true
            while more {
                var character = UInt8(truncatingIfNeeded: value & 0x1f)
                value >>= 5  // arithmetic shift, as C's >> on a negative long
                more = (character & 0x10) != 0 ? value != -1 : value != 0
                if more { character |= 0x20 }
                bytes.append(character + 48)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `rleFrString` of a counts string: the counts, undone from their deltas.
    ///
    /// - Throws: on a character outside 48...111, a string ending inside a value, a value of more
    ///   than 7 characters (pycocotools' 32-bit shifts go wrong there), or a count outside uint32.
    package static func decodeCounts(_ string: String) throws(SAMEverythingError) -> [Int] {
        var counts = [Int]()
        let bytes = Array(string.utf8)
        var position = 0
        while position < bytes.count {
            var value = 0
            var groups = 0
            var more = true
            while more {
                guard position < bytes.count else {
                    throw SAMEverythingError("COCO RLE string ends inside a value (at character \(position))")
                }
                let byte = bytes[position]
                guard byte >= 48, byte <= 111 else {
                    throw SAMEverythingError("COCO RLE string has character \(byte) at \(position), outside 48...111")
                }
                guard groups < 7 else {
                    throw SAMEverythingError("COCO RLE value at character \(position) runs past 7 characters")
                }
                let character = Int(byte) - 48
                value |= (character & 0x1f) << (5 * groups)
                more = (character & 0x20) != 0
                position += 1
                groups += 1
                if !more && (character & 0x10) != 0 { value |= -1 << (5 * groups) }
            }
            if counts.count > 2 { value += counts[counts.count - 2] }
            guard value >= 0, value <= Int(UInt32.max) else {
                throw SAMEverythingError("COCO RLE count \(counts.count) decodes to \(value), outside uint32")
            }
            counts.append(value)
        }
        return counts
    }
}

extension UncompressedRLE {
    /// The uncompressed RLE of a COCO one (pycocotools' `rleFrString`), checked to cover height × width.
    public init(_ coco: COCORLE) throws(SAMEverythingError) {
        self.init(height: coco.height, width: coco.width, counts: try COCORLE.decodeCounts(coco.counts))
        try validate()
    }
}
