import SAMTensor

extension Kernels {
    /// `F.interpolate(x, size=(height, width), mode="bicubic", align_corners=False)` on NCHW
    /// [B, C, h, w], evaluated in float64 and rounded once: Keys' cubic with a = -0.75, source
    /// index scale * (dst + 0.5) - 0.5 with scale = in / out (not clamped, as torch's cubic path
    /// does not), taps outside the input clamped to its edge. Meant for tensors resized once at
    /// load (Hiera's background position embedding), where float64 costs nothing and lands within
    /// an ulp or two of torch's float32 evaluation.
    /// ref: aten/src/ATen/native/UpSample.h get_cubic_upsample_coefficients, cubic_convolution1/2,
    /// area_pixel_compute_source_index (cubic); UpSampleKernel.cpp (bicubic, align_corners=False)
    package static func resizeBicubic(_ x: FloatTensor, height: Int, width: Int) -> FloatTensor {
        precondition(x.shape.count == 4 && x.shape[2] > 0 && x.shape[3] > 0, "resizeBicubic: expected NCHW, got \(x.shape)")
        precondition(height > 0 && width > 0, "resizeBicubic: output \(height)x\(width) is empty")
        let planes = x.shape[0] * x.shape[1], inHeight = x.shape[2], inWidth = x.shape[3]
        let rows = CubicTaps(inSize: inHeight, outSize: height), columns = CubicTaps(inSize: inWidth, outSize: width)
        var data = [Float](repeating: 0, count: planes * height * width)
        var rowPass = [Double](repeating: 0, count: inHeight * width)
        for plane in 0..<planes {
            let input = plane * inHeight * inWidth
            // Along the width first, then the height: the same sum as the 4x4 one, regrouped.
            for y in 0..<inHeight {
                for column in 0..<width {
                    var sum = 0.0
                    for tap in 0..<4 {
                        sum += columns.weights[column][tap] * Double(x.data[input + y * inWidth + columns.indices[column][tap]])
                    }
                    rowPass[y * width + column] = sum
                }
            }
            for row in 0..<height {
                for column in 0..<width {
                    var sum = 0.0
                    for tap in 0..<4 { sum += rows.weights[row][tap] * rowPass[rows.indices[row][tap] * width + column] }
                    data[(plane * height + row) * width + column] = Float(sum)
                }
            }
        }
        return FloatTensor(shape: [x.shape[0], x.shape[1], height, width], data: data)
    }

    /// The four source indices (clamped to the input) and weights of every output index along one axis.
    struct CubicTaps {
        let indices: [[Int]]
        let weights: [[Double]]

        init(inSize: Int, outSize: Int) {
            // ref: UpSample.h area_pixel_compute_scale (align_corners=False): in / out
            let scale = Double(inSize) / Double(outSize)
            var indices: [[Int]] = [], weights: [[Double]] = []
            for output in 0..<outSize {
                // ref: area_pixel_compute_source_index(scale, dst, false, cubic=true): no clamp at 0
                let source = scale * (Double(output) + 0.5) - 0.5
                let floor = source.rounded(.down), t = source - floor
                let first = Int(floor) - 1
                indices.append((0..<4).map { min(max(first + $0, 0), inSize - 1) })
                weights.append(Self.coefficients(t))
            }
            self.indices = indices
            self.weights = weights
        }

        /// ref: UpSample.h get_cubic_upsample_coefficients with A = -0.75
        static func coefficients(_ t: Double) -> [Double] {
            let a = -0.75
            func near(_ x: Double) -> Double { ((a + 2) * x - (a + 3)) * x * x + 1 }  // cubic_convolution1
            func far(_ x: Double) -> Double { ((a * x - 5 * a) * x + 8 * a) * x - 4 * a }  // cubic_convolution2
            return [far(t + 1), near(t), near(1 - t), far(2 - t)]
        }
    }

    /// x += nearest(coarse), x [B, C, H, W] and coarse [B, C, H/f, W/f] for an integer factor f:
    /// `x + F.interpolate(coarse, scale_factor=f, mode="nearest")`, which repeats every coarse
    /// pixel over an f x f block (source index floor(dst / f), exact for these sizes).
    /// ref: sam2/modeling/backbones/image_encoder.py FpnNeck.forward (top-down fusion)
    package static func addUpsampledNearest(_ x: inout FloatTensor, _ coarse: FloatTensor) {
        precondition(x.shape.count == 4 && coarse.shape.count == 4 && x.shape[0] == coarse.shape[0] && x.shape[1] == coarse.shape[1],
                     "addUpsampledNearest: \(x.shape) and \(coarse.shape) are not [B, C, H, W] of one batch and width")
        let height = x.shape[2], width = x.shape[3], coarseHeight = coarse.shape[2], coarseWidth = coarse.shape[3]
        precondition(coarseHeight > 0 && coarseWidth > 0 && height % coarseHeight == 0 && width % coarseWidth == 0
                     && height / coarseHeight == width / coarseWidth,
                     "addUpsampledNearest: \(x.shape) is not an integer upscale of \(coarse.shape)")
        let factor = height / coarseHeight, planes = x.shape[0] * x.shape[1]
        guard planes * height * width > 0 else { return }
        x.data.withUnsafeMutableBufferPointer { output in
            coarse.data.withUnsafeBufferPointer { input in
                let to = output.baseAddress!, from = input.baseAddress!
                parallelForChunks(planes * height) { rows in
                    for task in rows {
                        let plane = task / height, row = task % height
                        let out = to + task * width, source = from + (plane * coarseHeight + row / factor) * coarseWidth
                        for column in 0..<width { out[column] += source[column / factor] }
                    }
                }
            }
        }
    }
}
