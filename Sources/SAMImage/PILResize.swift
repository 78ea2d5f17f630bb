#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SAMParallel

/// Pillow's `Image.resize(size, Image.BILINEAR)` and `Image.resize(size, Image.BICUBIC)` on 8-bit
/// RGB, ported bit for bit.
///
/// Bilinear is what `ResizeLongestSide.apply_image` runs: torchvision's `resize` on a PIL image calls
/// `img.resize((w, h), BILINEAR)` (torchvision passes BILINEAR explicitly). Bicubic is Pillow's own
/// default for `Image.resize` (in the installed 13.0 as since 7.0), which SAM 2's video loader gets
/// from `img.resize((S, S))`. Pillow always antialiases: when shrinking, the filter's support is
/// widened by the scale factor. Two separable passes, each rounding to uint8 (clamped: the cubic's
/// negative lobes overshoot), with 22-bit fixed-point coefficients; which pass runs first depends
/// on the sizes (see `resize`).
///
/// ref: Pillow src/libImaging/Resample.c (precompute_coeffs, normalize_coeffs_8bpc,
/// ImagingResampleHorizontal_8bpc, ImagingResampleVertical_8bpc, ImagingResampleInner).
package enum PILResize {
    /// ref: Resample.c PRECISION_BITS = 32 - 8 - 2
    static let precisionBits = 22

    /// Fixed-point coefficients of one pass: for output index i, `count[i]` taps starting at
    /// input index `start[i]`, weights at `weights[i * stride ..< i * stride + count[i]]`.
    struct Coefficients {
        var start: [Int]
        var count: [Int]
        var stride: Int
        var weights: [Int32]
    }

    /// ref: Resample.c bilinear_filter (support 1.0)
    @inline(__always)
    static func triangle(_ x: Double) -> Double {
        let magnitude = x < 0 ? -x : x
        return magnitude < 1 ? 1 - magnitude : 0
    }

    /// ref: Resample.c precompute_coeffs followed by normalize_coeffs_8bpc, for the whole-image
    /// box (in0 = 0, in1 = inSize), in the same double arithmetic and truncating casts.
    static func coefficients(inSize: Int, outSize: Int, filter: Filter = .bilinear) -> Coefficients {
        let in0: Float = 0, in1 = Float(inSize)
        let scale = Double(in1 - in0) / Double(outSize)
        let filterScale = max(scale, 1.0)
        let support = filter.support * filterScale
        let stride = Int(support.rounded(.up)) * 2 + 1
        var start = [Int](repeating: 0, count: outSize)
        var count = [Int](repeating: 0, count: outSize)
        var weights = [Int32](repeating: 0, count: outSize * stride)
        var taps = [Double](repeating: 0, count: stride)
        let one = Double(1 << precisionBits)
        for output in 0..<outSize {
            let center = Double(in0) + (Double(output) + 0.5) * scale
            let inverseScale = 1.0 / filterScale
            // (int) casts truncate toward zero, as C does.
            let first = max(Int(center - support + 0.5), 0)
            let end = min(Int(center + support + 0.5), inSize)
            let n = end - first
            var total = 0.0
            for tap in 0..<n {
                let weight = filter.weight((Double(tap + first) - center + 0.5) * inverseScale)
                taps[tap] = weight
                total += weight
            }
            for tap in 0..<n {
                let normalized = total != 0 ? taps[tap] / total : taps[tap]
                // ref: normalize_coeffs_8bpc: round half away from zero by truncation
                weights[output * stride + tap] = normalized < 0
                    ? Int32(-0.5 + normalized * one) : Int32(0.5 + normalized * one)
            }
            start[output] = first
            count[output] = n
        }
        return Coefficients(start: start, count: count, stride: stride, weights: weights)
    }

    /// ref: Resample.c clip8: `clip8_lookups[in >> PRECISION_BITS]`, a table clamping to 0...255.
    @inline(__always)
    static func clip8(_ value: Int32) -> UInt8 {
        let shifted = value >> Int32(precisionBits)
        return shifted < 0 ? 0 : (shifted > 255 ? 255 : UInt8(truncatingIfNeeded: shifted))
    }

    /// Resizes to `width` x `height` (both >= 1) with `filter`. Same size returns the input
    /// unchanged, as Pillow (and torchvision before it) do.
    package static func resize(_ image: RGBImage, width: Int, height: Int,
                              filter: Filter = .bilinear) throws(ImageError) -> RGBImage {
        guard width > 0, height > 0, image.width > 0, image.height > 0,
              width <= RGBImage.maxDimension, height <= RGBImage.maxDimension else {
            throw ImageError(.invalidArgument, file: "<memory>",
                             "cannot resize \(image.width)x\(image.height) to \(width)x\(height) (1...\(RGBImage.maxDimension) a side)")
        }
        if width == image.width && height == image.height { return image }
        // ref: ImagingResampleInner: need_horizontal / need_vertical (a pass only when its size changes).
        let needHorizontal = width != image.width, needVertical = height != image.height
        let vertical = coefficients(inSize: image.height, outSize: height, filter: filter)
        // Pillow 13 (python-pillow/Pillow#9549, "if height is scaled down significantly more than
        // width, resize vertically first") runs the vertical pass first when the height loses more
        // than twice as many pixels as the width: (H - h) > 2 (W - w), with h < H. Determined
        // against the installed Pillow 13.0.0 on 1880 random size pairs, all consistent; for SAM's
        // uniform shrink this means portrait photos more than twice as tall as wide.
        if needHorizontal && needVertical && height < image.height
            && image.height - height > 2 * (image.width - width) {
            let shrunk = verticalPass(image, height: height, coefficients: vertical, rowOffset: 0)
            return horizontalPass(shrunk, width: width, rows: 0..<height, filter: filter)
        }
        // Horizontal first, only on the input rows the vertical pass reads.
        let firstRow = vertical.start[0]
        let lastRow = vertical.start[height - 1] + vertical.count[height - 1]
        var current = image
        var rowOffset = 0
        if needHorizontal {
            current = horizontalPass(image, width: width, rows: firstRow..<lastRow, filter: filter)
            rowOffset = firstRow
        }
        if needVertical {
            current = verticalPass(current, height: height, coefficients: vertical, rowOffset: rowOffset)
        }
        return current
    }

    /// ref: ImagingResampleHorizontal_8bpc: rows `rows` of the input, resampled along x.
    static func horizontalPass(_ image: RGBImage, width: Int, rows: Range<Int>, filter: Filter = .bilinear) -> RGBImage {
        let table = coefficients(inSize: image.width, outSize: width, filter: filter)
        let outHeight = rows.count
        var output = [UInt8](repeating: 0, count: width * outHeight * 3)
        let half = Int32(1) << Int32(precisionBits - 1)
        let inWidth = image.width
        image.pixels.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                table.weights.withUnsafeBufferPointer { weights in
                    let inBase = input.baseAddress!, outBase = out.baseAddress!, weightBase = weights.baseAddress!
                    Workers.forEach(outHeight) { y in
                        let source = inBase + (y + rows.lowerBound) * inWidth * 3
                        let target = outBase + y * width * 3
                        for x in 0..<width {
                            let first = table.start[x], n = table.count[x]
                            let k = weightBase + x * table.stride
                            var r = half, g = half, b = half
                            var pixel = source + first * 3
                            for tap in 0..<n {
                                let w = k[tap]
                                r &+= Int32(pixel[0]) &* w
                                g &+= Int32(pixel[1]) &* w
                                b &+= Int32(pixel[2]) &* w
                                pixel += 3
                            }
                            target[x * 3] = clip8(r)
                            target[x * 3 + 1] = clip8(g)
                            target[x * 3 + 2] = clip8(b)
                        }
                    }
                }
            }
        }
        return RGBImage(checkedWidth: width, height: outHeight, pixels: output)
    }

    /// ref: ImagingResampleVertical_8bpc, with bounds shifted by the rows the horizontal pass skipped.
    static func verticalPass(_ image: RGBImage, height: Int, coefficients table: Coefficients, rowOffset: Int) -> RGBImage {
        let width = image.width
        let rowLength = width * 3
        var output = [UInt8](repeating: 0, count: rowLength * height)
        let half = Int32(1) << Int32(precisionBits - 1)
        image.pixels.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                table.weights.withUnsafeBufferPointer { weights in
                    let inBase = input.baseAddress!, outBase = out.baseAddress!, weightBase = weights.baseAddress!
                    Workers.forEach(height) { y in
                        let first = table.start[y] - rowOffset, n = table.count[y]
                        let k = weightBase + y * table.stride
                        let target = outBase + y * rowLength
                        var sums = [Int32](repeating: half, count: rowLength)
                        sums.withUnsafeMutableBufferPointer { sum in
                            for tap in 0..<n {
                                let w = k[tap]
                                let source = inBase + (first + tap) * rowLength
                                for index in 0..<rowLength { sum[index] &+= Int32(source[index]) &* w }
                            }
                            for index in 0..<rowLength { target[index] = clip8(sum[index]) }
                        }
                    }
                }
            }
        }
        return RGBImage(checkedWidth: width, height: height, pixels: output)
    }
}
