/// A binary mask: `height` rows of `width` pixels, row-major, each 0 or 1.
///
/// Upstream's masks are `bool` tensors of shape H×W. Every initialiser here normalises to 0/1, which
/// the word-at-a-time scans (boxes, RLE) rely on.
public struct BinaryMask: Sendable, Equatable, CustomStringConvertible {
    /// Columns, in pixels.
    public let width: Int
    /// Rows, in pixels.
    public let height: Int
    /// Row-major, `width * height` bytes, each 0 or 1.
    public private(set) var pixels: [UInt8]

    /// A mask from row-major bytes; any non-zero byte counts as set (stored as 1).
    public init(width: Int, height: Int, pixels: [UInt8]) throws(SAMEverythingError) {
        let count = try checkedPixelCount(width: width, height: height, what: "mask")
        guard pixels.count == count else {
            throw SAMEverythingError("mask of \(width)x\(height) needs \(count) pixels, got \(pixels.count)")
        }
        self.width = width
        self.height = height
        self.pixels = pixels
        if pixels.contains(where: { $0 > 1 }) {
            self.pixels = pixels.map { $0 != 0 ? 1 : 0 }
        }
    }

    /// An empty (all-zero) mask.
    public init(width: Int, height: Int) throws(SAMEverythingError) {
        let count = try checkedPixelCount(width: width, height: height, what: "mask")
        self.init(unchecked: width, height: height, pixels: [UInt8](repeating: 0, count: count))
    }

    /// Thresholds mask logits as upstream's `masks > mask_threshold` does: strictly greater, in
    /// float32 (torch compares a float32 tensor with a Python float after rounding the float to
    /// float32), so NaN logits give 0.
    // ref: segment_anything/automatic_mask_generator.py _process_batch (data["masks"] > mask_threshold)
    package init(thresholding logits: UnsafeBufferPointer<Float>, width: Int, height: Int,
                threshold: Double = 0) throws(SAMEverythingError) {
        let count = try checkedPixelCount(width: width, height: height, what: "logits")
        guard logits.count == count else {
            throw SAMEverythingError("logits of \(width)x\(height) need \(count) values, got \(logits.count)")
        }
        let cut = Float(threshold)
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            guard let source = logits.baseAddress, let target = out.baseAddress else {
                initialized = 0
                return
            }
            // Sixteen at a time: a comparison lane is all ones (-1) when true; its low bit is the pixel.
            let cutLanes = SIMD16<Float>(repeating: cut)
            let raw = UnsafeRawPointer(source)
            var i = 0
            while count - i >= 16 {
                let lanes = raw.loadUnaligned(fromByteOffset: i * MemoryLayout<Float>.stride, as: SIMD16<Float>.self)
                let set = unsafeBitCast(lanes .> cutLanes, to: SIMD16<Int32>.self) & 1
                UnsafeMutableRawPointer(target + i).storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: set), as: SIMD16<UInt8>.self)
                i += 16
            }
            while i < count {
                target[i] = source[i] > cut ? 1 : 0
                i += 1
            }
            initialized = count
        }
        self.init(unchecked: width, height: height, pixels: pixels)
    }

    /// `init(thresholding:width:height:threshold:)` on an array.
    package init(thresholding logits: [Float], width: Int, height: Int, threshold: Double = 0) throws(SAMEverythingError) {
        self = try logits.withUnsafeBufferPointer { (buffer) throws(SAMEverythingError) -> BinaryMask in
            try BinaryMask(thresholding: buffer, width: width, height: height, threshold: threshold)
        }
    }

    /// Trusted construction: `pixels` already has `width * height` bytes of 0/1.
    init(unchecked width: Int, height: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The pixel at column `x`, row `y` (false outside the mask).
    public subscript(x x: Int, y y: Int) -> Bool {
        guard x >= 0, x < width, y >= 0, y < height else { return false }
        return pixels[y * width + x] != 0
    }

    /// Sets one pixel; positions outside the mask are ignored.
    public mutating func set(x: Int, y: Int, _ value: Bool) {
        guard x >= 0, x < width, y >= 0, y < height else { return }
        pixels[y * width + x] = value ? 1 : 0
    }

    /// The number of set pixels (the "area" of a record, equal to `area_from_rle` of its RLE).
    public var area: Int {
        pixels.withUnsafeBufferPointer { buffer in
            var total = 0
            for value in buffer { total &+= Int(value) }
            return total
        }
    }

    /// True when no pixel is set.
    public var isEmpty: Bool { !pixels.contains(1) }

    /// `BinaryMask(<width>x<height>, <area> set)`.
    public var description: String { "BinaryMask(\(width)x\(height), \(area) set)" }
}
