import SAMTensor

/// Full-size masks from the decoder's low-resolution logits, as `Sam.postprocess_masks` and
/// `SamPredictor.predict` compute them. ref: mobile_sam/modeling/sam.py Sam.postprocess_masks
///
/// The float path reproduces torch's CPU `F.interpolate(mode="bilinear", align_corners=False)`
/// bit for bit whenever torch runs its generic kernel, i.e. for any original image with
/// H + W > 128 (see `TorchBilinear`; verified on the drop's 3 x 1365 x 2048 logits), so the
/// thresholded masks agree everywhere, logits within an ulp of zero included. Rows are
/// computed in parallel bands; each mask runs both resizes through precomputed tap tables.
public struct MaskPostprocessor: Sendable, Equatable {
    /// The encoder's square input side (image_encoder.img_size).
    public var imageSize: Int
    /// ref: sam.py Sam.mask_threshold = 0.0; predictor.py: masks = masks > mask_threshold
    public var maskThreshold: Float

    public init(imageSize: Int = 1024, maskThreshold: Float = 0.0) {
        self.imageSize = imageSize
        self.maskThreshold = maskThreshold
    }

    /// Logits [B, K, h, w] -> [B, K, originalSize.height, originalSize.width] logits.
    /// ref: sam.py Sam.postprocess_masks: interpolate to (img_size, img_size), crop
    /// [:input_size[0], :input_size[1]], interpolate to original_size.
    public func upscale(_ lowRes: FloatTensor, inputSize: ImageSize, originalSize: ImageSize) throws(ImageError) -> FloatTensor {
        let plan = try Plan(lowRes.shape, imageSize: imageSize, inputSize: inputSize, originalSize: originalSize)
        var output = [Float](repeating: 0, count: plan.planes * plan.outputPlane)
        lowRes.data.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                let inBase = input.baseAddress!, outBase = out.baseAddress!
                for plane in 0..<plan.planes {
                    let target = outBase + plane * plan.outputPlane
                    plan.run(inBase + plane * plan.inputPlane) { y, row in
                        (target + y * plan.second.outCols).update(from: row, count: plan.second.outCols)
                    }
                }
            }
        }
        return FloatTensor(shape: plan.outputShape, data: output)
    }

    /// Binary masks `logits > maskThreshold` at the original size, without keeping the
    /// full-size logits. ref: predictor.py SamPredictor.predict_torch (return_logits=False)
    public func masks(_ lowRes: FloatTensor, inputSize: ImageSize, originalSize: ImageSize) throws(ImageError) -> BinaryMasks {
        let plan = try Plan(lowRes.shape, imageSize: imageSize, inputSize: inputSize, originalSize: originalSize)
        var output = [UInt8](repeating: 0, count: plan.planes * plan.outputPlane)
        let threshold = maskThreshold
        lowRes.data.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                let inBase = input.baseAddress!, outBase = out.baseAddress!
                for plane in 0..<plan.planes {
                    let target = outBase + plane * plan.outputPlane
                    plan.run(inBase + plane * plan.inputPlane) { y, row in
                        let destination = target + y * plan.second.outCols
                        for x in 0..<plan.second.outCols { destination[x] = row[x] > threshold ? 1 : 0 }
                    }
                }
            }
        }
        return BinaryMasks(count: plan.planes, height: originalSize.height, width: originalSize.width, values: output)
    }

    /// Both resizes of one plane, with their tables.
    struct Plan {
        let planes: Int
        let inputPlane: Int
        let outputPlane: Int
        let outputShape: [Int]
        let lowRows: Int, lowCols: Int
        /// low-res -> (imageSize, imageSize), evaluated only on the cropped (inputSize) region.
        let first: TorchBilinear.Plan2D
        /// cropped -> originalSize.
        let second: TorchBilinear.Plan2D

        init(_ shape: [Int], imageSize: Int, inputSize: ImageSize, originalSize: ImageSize) throws(ImageError) {
            guard shape.count == 4, shape.allSatisfy({ $0 > 0 }) else {
                throw ImageError(.invalidArgument, file: "<memory>", "low-res masks must be [B, K, h, w], got \(shape)")
            }
            guard inputSize.height > 0, inputSize.width > 0, inputSize.height <= imageSize, inputSize.width <= imageSize else {
                throw ImageError(.invalidArgument, file: "<memory>", "input size \(inputSize) must lie within the \(imageSize)x\(imageSize) input")
            }
            guard originalSize.height > 0, originalSize.width > 0,
                  originalSize.height <= ImageIO.maxDimension, originalSize.width <= ImageIO.maxDimension else {
                throw ImageError(.invalidArgument, file: "<memory>", "original size \(originalSize) is empty or larger than \(ImageIO.maxDimension) a side")
            }
            planes = shape[0] * shape[1]
            lowRows = shape[2]
            lowCols = shape[3]
            inputPlane = lowRows * lowCols
            outputPlane = originalSize.height * originalSize.width
            outputShape = [shape[0], shape[1], originalSize.height, originalSize.width]
            // ref: sam.py postprocess_masks: F.interpolate(masks, (img_size, img_size), ...) then
            // masks[..., :input_size[0], :input_size[1]]: the crop keeps the first entries of
            // the full-size tables.
            first = TorchBilinear.Plan2D(inRows: lowRows, inCols: lowCols, outRows: imageSize, outCols: imageSize,
                                         keepRows: inputSize.height, keepCols: inputSize.width)
            // ref: sam.py postprocess_masks: F.interpolate(masks, original_size, ...)
            second = TorchBilinear.Plan2D(inRows: inputSize.height, inCols: inputSize.width,
                                          outRows: originalSize.height, outCols: originalSize.width,
                                          keepRows: originalSize.height, keepCols: originalSize.width)
        }

        /// Runs both resizes of the plane at `input`, handing each finished output row to `sink`
        /// (row index, pointer to `second.outCols` floats). Rows are produced on several threads.
        func run(_ input: UnsafePointer<Float>, sink: (Int, UnsafePointer<Float>) -> Void) {
            var cropped = [Float](repeating: 0, count: first.keepRows * first.keepCols)
            cropped.withUnsafeMutableBufferPointer { buffer in
                let base = buffer.baseAddress!
                first.apply(input, rowStride: lowCols) { y, row in
                    (base + y * first.keepCols).update(from: row, count: first.keepCols)
                }
            }
            cropped.withUnsafeBufferPointer { buffer in
                second.apply(buffer.baseAddress!, rowStride: first.keepCols, sink: sink)
            }
        }
    }
}

/// Boolean masks [count, height, width], one byte per pixel (0 or 1).
public struct BinaryMasks: Sendable, Equatable {
    public let count: Int
    public let height: Int
    public let width: Int
    /// `count * height * width` values, 1 where the logit exceeds the threshold.
    public var values: [UInt8]

    public init(count: Int, height: Int, width: Int, values: [UInt8]) {
        precondition(values.count == count * height * width, "BinaryMasks: \(values.count) values for \(count)x\(height)x\(width)")
        self.count = count
        self.height = height
        self.width = width
        self.values = values
    }

    /// Mask `index` as `height * width` values of 0 or 1.
    public func mask(_ index: Int) -> ArraySlice<UInt8> {
        values[(index * height * width)..<((index + 1) * height * width)]
    }

    /// Mask `index` as 8-bit gray (0 / 255), ready for `ImageIO.writeGrayPNG`.
    public func grayPixels(_ index: Int) -> [UInt8] {
        mask(index).map { $0 != 0 ? 255 : 0 }
    }

    /// How many pixels are set in mask `index`.
    public func area(_ index: Int) -> Int {
        mask(index).reduce(0) { $0 + Int($1) }
    }
}

/// torch's CPU `upsample_bilinear2d` (align_corners=False, no antialias) on float32, ported
/// to give the same bits as torch 2.15 on x86-64 (verified against it on the drop's masks).
///
/// ref: aten/src/ATen/native/UpSample.h area_pixel_compute_scale,
/// area_pixel_compute_source_index, guard_index_and_lambda; cpu/UpSampleKernel.cpp
/// upsample_bilinear2d_kernel_impl_float, _use_vectorized_kernel_cond_2d.
/// torch picks one of two kernels by output size, and the bits depend on which:
/// - output H + W > 128 (every SAM upscale of a real photo): the generic kernel, reproduced
///   exactly. Each output is `fma(t0, h0, t1 * h1)` of two width-interpolated rows
///   `t = fma(x0, w0, x1 * w1)` (torch's kernel is built with FMA contraction), and the source
///   index `scale * (i + 0.5) - 0.5` is a float multiply then a float subtract. Evaluating it
///   separably (rows first, cached) performs the same operations in the same order.
/// - output H + W <= 128: a separable kernel whose rounding we match along one axis (source
///   index as one fused multiply-add) but not for 2-D resizes, where about half of the logits
///   differ from torch's in the last bit or two (see PostprocessTests). Only original images
///   with H + W <= 128 pixels take this path (the 256 -> 1024 stage never does).
enum TorchBilinear {
    /// `a * b + c` with one rounding, as the FMA instruction torch's kernel uses.
    /// Swift's `addingProduct` is a libm call on baseline x86-64 (no FMA in the target), which
    /// would dominate this kernel. In double, `a * b` is exact and the sum rounds once; rounding
    /// that double to float gives the single-rounded result except when the double sits exactly
    /// halfway between two floats after being rounded itself. TwoSum gives the exact error of the
    /// double sum; in that case a one-ulp nudge toward the exact value fixes the float rounding.
    /// Results in float's subnormal range, where midpoints sit elsewhere, take the libm path.
    @inline(__always)
    static func fma(_ a: Float, _ b: Float, _ c: Float) -> Float {
        let product = Double(a) * Double(b)  // exact: 24 + 24 significant bits
        let addend = Double(c)
        let sum = product + addend
        if sum.magnitude < Double(Float.leastNormalMagnitude) && sum != 0 { return c.addingProduct(a, b) }
        // ref: Knuth's TwoSum: sum + error == product + addend exactly.
        let addendPart = sum - product
        let error = (product - (sum - addendPart)) + (addend - addendPart)
        let halfway = (sum.bitPattern & 0x1FFF_FFFF) == 0x1000_0000  // a float rounding midpoint
        if halfway && error != 0 { return Float(error > 0 ? sum.nextUp : sum.nextDown) }
        return Float(sum)
    }

    /// The two taps and weights of each output index along one axis.
    struct Axis {
        let index0: [Int]
        let index1: [Int]
        let weight0: [Float]
        let weight1: [Float]

        /// `fusedSourceIndex`: the source index as one fused multiply-add (torch's small-output
        /// kernel) rather than a multiply and a subtract (its generic kernel).
        init(inSize: Int, outSize: Int, fusedSourceIndex: Bool) {
            // ref: UpSample.h area_pixel_compute_scale: (float)input_size / output_size
            let scale = Float(inSize) / Float(outSize)
            var index0 = [Int](repeating: 0, count: outSize), index1 = index0
            var weight0 = [Float](repeating: 0, count: outSize), weight1 = weight0
            for output in 0..<outSize {
                // ref: UpSample.h area_pixel_compute_source_index: scale * (dst + 0.5) - 0.5, floored at 0
                let center = Float(output) + 0.5
                var source = fusedSourceIndex ? (-0.5 as Float).addingProduct(scale, center) : scale * center - 0.5
                if source < 0 { source = 0 }
                // ref: UpSample.h guard_index_and_lambda
                let lower = min(Int(source.rounded(.down)), inSize - 1)
                let lambda = min(max(source - Float(lower), 0), 1)
                index0[output] = lower
                index1[output] = lower < inSize - 1 ? lower + 1 : lower
                weight1[output] = lambda
                weight0[output] = 1 - lambda
            }
            self.index0 = index0
            self.index1 = index1
            self.weight0 = weight0
            self.weight1 = weight1
        }
    }

    /// One 2-D resize, producing only output rows `0..<keepRows` and columns `0..<keepCols`
    /// of an (outRows, outCols) result: a crop of the full resize, with identical values.
    struct Plan2D {
        let rows: Axis
        let cols: Axis
        let inRows: Int, inCols: Int
        let keepRows: Int, keepCols: Int
        var outCols: Int { keepCols }

        init(inRows: Int, inCols: Int, outRows: Int, outCols: Int, keepRows: Int, keepCols: Int) {
            self.inRows = inRows
            self.inCols = inCols
            self.keepRows = keepRows
            self.keepCols = keepCols
            // ref: UpSampleKernel.cpp _use_vectorized_kernel_cond_2d: (output H + output W) <= 128
            let smallOutput = outRows + outCols <= 128
            rows = Axis(inSize: inRows, outSize: outRows, fusedSourceIndex: smallOutput)
            cols = Axis(inSize: inCols, outSize: outCols, fusedSourceIndex: smallOutput)
        }

        /// Resizes the plane at `input` (rows `rowStride` floats apart), handing each output
        /// row to `sink` from several threads.
        func apply(_ input: UnsafePointer<Float>, rowStride: Int, sink: (Int, UnsafePointer<Float>) -> Void) {
            // Input rows the kept output rows read.
            let lastRow = rows.index1[0..<keepRows].max()!
            let usedRows = lastRow + 1
            var horizontal = [Float](repeating: 0, count: usedRows * keepCols)
            horizontal.withUnsafeMutableBufferPointer { buffer in
                let base = buffer.baseAddress!
                cols.index0.withUnsafeBufferPointer { i0 in cols.index1.withUnsafeBufferPointer { i1 in
                cols.weight0.withUnsafeBufferPointer { w0 in cols.weight1.withUnsafeBufferPointer { w1 in
                    parallelRows(usedRows) { y in
                        let source = input + y * rowStride
                        let target = base + y * keepCols
                        for x in 0..<keepCols {
                            // fma(x0, w0, x1 * w1), as torch's contracted `x0 * w0 + x1 * w1`
                            target[x] = TorchBilinear.fma(source[i0[x]], w0[x], source[i1[x]] * w1[x])
                        }
                    }
                }}}}
            }
            horizontal.withUnsafeBufferPointer { buffer in
                let base = buffer.baseAddress!
                let columns = keepCols
                parallelRows(keepRows) { y in
                    let top = base + rows.index0[y] * columns, bottom = base + rows.index1[y] * columns
                    let w0 = rows.weight0[y], w1 = rows.weight1[y]
                    withUnsafeTemporaryAllocation(of: Float.self, capacity: columns) { row in
                        let out = row.baseAddress!
                        // fma(t0, h0, t1 * h1), as torch's contracted `t0 * h0 + t1 * h1`
                        for x in 0..<columns { out[x] = TorchBilinear.fma(top[x], w0, bottom[x] * w1) }
                        sink(y, UnsafePointer(out))
                    }
                }
            }
        }
    }
}
