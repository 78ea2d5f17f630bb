import SAMParallel
import SAMTensor

/// torch's `F.interpolate(x, size, mode="bilinear", align_corners=False, antialias=True)` on float
/// planes, as torchvision's `Resize` runs it on float tensors (SAM 2's image transform): a separable
/// triangle filter stretched by the scale when shrinking (support `scale`, so every input pixel
/// under an output pixel counts) and plain bilinear taps when enlarging, each output's weights
/// normalised to sum 1. Width first, then height, each pass rounded to float as torch's temporary is.
/// Weights, window bounds and sums are computed in float the way torch's CPU kernel does.
/// ref: aten/src/ATen/native/cpu/UpSampleKernel.cpp _compute_index_ranges_weights, _compute_weights_aa,
/// interpolate_aa_single_dim, separable_upsample_generic_Nd_kernel_impl (horizontal pass first)
package enum AntialiasedBilinear {
    /// One output index's window: the first input index, and a weight per input index from it.
    struct Taps {
        let first: [Int]
        let weights: [[Float]]

        init(inSize: Int, outSize: Int) {
            // ref: UpSample.h area_pixel_compute_scale<float>: (float)input_size / output_size
            let scale = Float(inSize) / Float(outSize)
            // ref: _compute_index_ranges_weights — support = interp_size / 2 * scale when shrinking, else 1
            let support = scale >= 1 ? Float(Double(scale)) : 1
            let invScale: Float = scale >= 1 ? Float(1.0 / Double(scale)) : 1
            var first: [Int] = [], weights: [[Float]] = []
            for i in 0..<outSize {
                // ref: _compute_weights_aa — center = scale * (i + 0.5) (in double, stored as float)
                let center = Float(Double(scale) * (Double(i) + 0.5))
                let lower = max(Int(Double(center - support) + 0.5), 0)
                let upper = min(Int(Double(center + support) + 0.5), inSize)
                var taps: [Float] = []
                var total: Float = 0
                for j in lower..<max(upper, lower) {
                    // ref: w = filter_fn((j + xmin - center + 0.5) * invscale); bilinear_filter: 1 - |x| inside (-1, 1)
                    let x = Float((Double(Float(j) - center) + 0.5) * Double(invScale))
                    let w: Float = abs(x) < 1 ? Float(1.0 - Double(abs(x))) : 0
                    taps.append(w)
                    total += w
                }
                if total != 0 { taps = taps.map { $0 / total } }
                first.append(lower)
                weights.append(taps)
            }
            self.first = first
            self.weights = weights
        }
    }

    /// planes [P, h, w] (row-major, P planes) -> [P, height, width].
    package static func resize(_ planes: [Float], count: Int, height inHeight: Int, width inWidth: Int,
                              toHeight height: Int, width: Int) -> [Float] {
        precondition(planes.count == count * inHeight * inWidth, "AntialiasedBilinear: \(planes.count) values are not \(count) planes of \(inHeight)x\(inWidth)")
        var source = planes, rows = inHeight, columns = inWidth
        // ref: separable_upsample_generic_Nd_kernel_impl — the contiguous (width) dimension first, a
        // dimension only when its size changes.
        if width != inWidth {
            source = pass(source, planes: count, rows: rows, length: inWidth, taps: Taps(inSize: inWidth, outSize: width), alongRows: true)
            columns = width
        }
        if height != inHeight {
            source = pass(source, planes: count, rows: inHeight, length: columns, taps: Taps(inSize: inHeight, outSize: height), alongRows: false)
            rows = height
        }
        return source
    }

    /// One axis: along each row (width) or down each column (height). Each output is
    /// t0 * w0 + t1 * w1 + ..., summed left to right in float (interpolate_aa_single_dim).
    static func pass(_ input: [Float], planes: Int, rows: Int, length: Int, taps: Taps, alongRows: Bool) -> [Float] {
        let outLength = taps.first.count
        let (outRows, outColumns) = alongRows ? (rows, outLength) : (outLength, length)
        return [Float](unsafeUninitializedCapacity: planes * outRows * outColumns) { buffer, initialized in
            input.withUnsafeBufferPointer { source in
                let from = source.baseAddress!, to = buffer.baseAddress!
                Workers.forEachChunk(planes * outRows) { tasks in
                    for task in tasks {
                        let plane = task / outRows, row = task % outRows
                        let out = to + task * outColumns
                        if alongRows {
                            let line = from + (plane * rows + row) * length
                            for column in 0..<outColumns {
                                let weights = taps.weights[column], start = line + taps.first[column]
                                var sum: Float = 0
                                for (k, w) in weights.enumerated() { sum = k == 0 ? start[0] * w : sum + start[k] * w }
                                out[column] = sum
                            }
                        } else {
                            let weights = taps.weights[row], start = from + (plane * rows + taps.first[row]) * length
                            for column in 0..<outColumns {
                                var sum: Float = 0
                                for (k, w) in weights.enumerated() {
                                    let value = start[k * length + column]
                                    sum = k == 0 ? value * w : sum + value * w
                                }
                                out[column] = sum
                            }
                        }
                    }
                }
            }
            initialized = planes * outRows * outColumns
        }
    }
}
