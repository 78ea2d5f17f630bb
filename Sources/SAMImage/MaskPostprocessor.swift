#if canImport(Glibc)
import Glibc
#endif
import CVectorMath
import SAMParallel
import SAMTensor

/// Full-size masks from the decoder's low-resolution logits, as `Sam.postprocess_masks` and
/// `SamPredictor.predict` compute them. ref: mobile_sam/modeling/sam.py Sam.postprocess_masks
///
/// The float path reproduces torch's CPU `F.interpolate(mode="bilinear", align_corners=False)`
/// bit for bit whenever torch runs its generic kernel, i.e. for any original image with
/// H + W > 128 (see `TorchBilinear`; verified on the full-size set's 3 x 1365 x 2048 logits), so the
/// thresholded masks agree everywhere, logits within an ulp of zero included. Output rows are
/// computed in parallel bands through precomputed tap tables, each band making the rows of
/// the intermediate resize it reads as it goes.
package struct MaskPostprocessor: Sendable, Equatable {
    /// The encoder's square input side (image_encoder.img_size).
    package var imageSize: Int
    /// ref: sam.py Sam.mask_threshold = 0.0; predictor.py: masks = masks > mask_threshold
    package var maskThreshold: Float

    package init(imageSize: Int = 1024, maskThreshold: Float = 0.0) {
        self.imageSize = imageSize
        self.maskThreshold = maskThreshold
    }

    /// Logits [B, K, h, w] -> [B, K, originalSize.height, originalSize.width] logits.
    /// ref: sam.py Sam.postprocess_masks: interpolate to (img_size, img_size), crop
    /// [:input_size[0], :input_size[1]], interpolate to original_size.
    package func upscale(_ lowRes: FloatTensor, inputSize: ImageSize, originalSize: ImageSize) throws(ImageError) -> FloatTensor {
        let plan = try Plan(lowRes.shape, imageSize: imageSize, inputSize: inputSize, originalSize: originalSize)
        // Every element is written below: no zero fill.
        let output = [Float](unsafeUninitializedCapacity: plan.planes * plan.outputPlane) { buffer, count in
            adviseHugePages(UnsafeMutableRawBufferPointer(buffer))
            lowRes.data.withUnsafeBufferPointer { input in
                plan.run(input.baseAddress!, into: .logits(buffer.baseAddress!))
            }
            count = buffer.count
        }
        return FloatTensor(shape: plan.outputShape, data: output)
    }

    /// Binary masks `logits > maskThreshold` at the original size, without keeping the
    /// full-size logits. ref: predictor.py SamPredictor.predict_torch (return_logits=False)
    package func masks(_ lowRes: FloatTensor, inputSize: ImageSize, originalSize: ImageSize) throws(ImageError) -> BinaryMasks {
        let plan = try Plan(lowRes.shape, imageSize: imageSize, inputSize: inputSize, originalSize: originalSize)
        let output = [UInt8](unsafeUninitializedCapacity: plan.planes * plan.outputPlane) { buffer, count in
            adviseHugePages(UnsafeMutableRawBufferPointer(buffer))
            lowRes.data.withUnsafeBufferPointer { input in
                plan.run(input.baseAddress!, into: .binary(buffer.baseAddress!, threshold: maskThreshold))
            }
            count = buffer.count
        }
        return BinaryMasks(count: plan.planes, height: originalSize.height, width: originalSize.width, values: output)
    }

    /// Binary masks `logits > maskThreshold` at the original size with each mask's stability counts,
    /// in the same pass over the full-size logits, which are never stored: what the automatic mask
    /// generator needs of every mask it keeps.
    /// ref: segment_anything/utils/amg.py calculate_stability_score (counts of logits above
    /// threshold + offset and above threshold - offset)
    package func masksWithStability(_ lowRes: FloatTensor, inputSize: ImageSize, originalSize: ImageSize,
                                   offset: Double) throws(ImageError) -> (masks: BinaryMasks, stability: [StabilityCounts]) {
        let plan = try Plan(lowRes.shape, imageSize: imageSize, inputSize: inputSize, originalSize: originalSize)
        let bands = plan.bandsPerPlane(rows: originalSize.height)
        var counts = [StabilityCounts](repeating: StabilityCounts(above: 0, aboveLowered: 0), count: plan.planes * bands)
        let output = [UInt8](unsafeUninitializedCapacity: plan.planes * plan.outputPlane) { buffer, count in
            adviseHugePages(UnsafeMutableRawBufferPointer(buffer))
            lowRes.data.withUnsafeBufferPointer { input in
                counts.withUnsafeMutableBufferPointer { slots in
                    plan.run(input.baseAddress!, into: .binaryWithStability(buffer.baseAddress!, threshold: maskThreshold,
                                                                            offset: offset, counts: slots.baseAddress!))
                }
            }
            count = buffer.count
        }
        let perPlane = (0..<plan.planes).map { plane in
            counts[(plane * bands)..<((plane + 1) * bands)].reduce(StabilityCounts(above: 0, aboveLowered: 0)) {
                StabilityCounts(above: $0.above + $1.above, aboveLowered: $0.aboveLowered + $1.aboveLowered)
            }
        }
        return (BinaryMasks(count: plan.planes, height: originalSize.height, width: originalSize.width, values: output), perPlane)
    }

    /// Where `Plan.run` puts the full-size rows: `planes * outputPlane` elements, all written.
    enum Destination {
        case logits(UnsafeMutablePointer<Float>)
        case binary(UnsafeMutablePointer<UInt8>, threshold: Float)
        /// As `binary`, and each band's counts of logits above threshold + offset and threshold - offset
        /// in `counts[plane * bands + band]`.
        case binaryWithStability(UnsafeMutablePointer<UInt8>, threshold: Float, offset: Double, counts: UnsafeMutablePointer<StabilityCounts>)
    }

    /// Both resizes of every plane, with their tables.
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
                  originalSize.height <= RGBImage.maxDimension, originalSize.width <= RGBImage.maxDimension else {
                throw ImageError(.invalidArgument, file: "<memory>", "original size \(originalSize) is empty or larger than \(RGBImage.maxDimension) a side")
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

        /// Runs both resizes of every plane at `input` (planes `inputPlane` floats apart), in
        /// bands of output rows. A band makes the rows of the cropped intermediate it reads one
        /// at a time, rounded to float as torch's intermediate is; rows and columns of the
        /// (imageSize, imageSize) resize outside the crop are never computed.
        func run(_ input: UnsafePointer<Float>, into destination: Destination) {
            let columns = second.keepCols
            let bandCount = bandsPerPlane(rows: second.keepRows)
            forEachBand(rows: second.keepRows) { plane, bandIndex, band in
                let low = input + plane * inputPlane
                first.withScratch { firstScratch in
                    second.withScratch { secondScratch in
                        // Row `r` of the cropped intermediate, valid until the next call.
                        func croppedRow(_ r: Int) -> UnsafePointer<Float> {
                            let row = firstScratch.row
                            first.resizeRow(r, into: row, scratch: &firstScratch) { low + $0 * lowCols }
                            return UnsafePointer(row)
                        }
                        for y in band {
                            let offset = plane * outputPlane + y * columns
                            switch destination {
                            case .logits(let output):
                                second.resizeRow(y, into: output + offset, scratch: &secondScratch,
                                                 streamingStores: true, inputRow: croppedRow)
                            case .binary(let output, let threshold):
                                let row = secondScratch.row
                                second.resizeRow(y, into: row, scratch: &secondScratch, inputRow: croppedRow)
                                let target = output + offset
                                for x in 0..<columns { target[x] = row[x] > threshold ? 1 : 0 }
                            case .binaryWithStability(let output, let threshold, let shift, let counts):
                                let row = secondScratch.row
                                second.resizeRow(y, into: row, scratch: &secondScratch, inputRow: croppedRow)
                                let target = output + offset
                                // ref: amg.py calculate_stability_score: (masks > threshold + offset) and
                                // (masks > threshold - offset): Python adds in double, torch compares in float32.
                                let high = Float(Double(threshold) + shift), low = Float(Double(threshold) - shift)
                                var above = 0, aboveLowered = 0
                                for x in 0..<columns {
                                    let value = row[x]
                                    target[x] = value > threshold ? 1 : 0
                                    above &+= value > high ? 1 : 0
                                    aboveLowered &+= value > low ? 1 : 0
                                }
                                let slot = counts + plane * bandCount + bandIndex
                                slot.pointee = StabilityCounts(above: slot.pointee.above + above,
                                                               aboveLowered: slot.pointee.aboveLowered + aboveLowered)
                            }
                        }
                    }
                }
            }
        }

        /// How many bands of rows each plane is cut into: a few per core balance uneven progress.
        func bandsPerPlane(rows: Int) -> Int { min(rows, max(1, (Workers.count * 4 + planes - 1) / planes)) }

        /// Runs `body(plane, band index, rows)` over every plane cut into bands of rows, on all cores;
        /// all planes share one parallel loop.
        func forEachBand(rows: Int, _ body: (Int, Int, Range<Int>) -> Void) {
            let bands = bandsPerPlane(rows: rows)
            Workers.forEach(planes * bands) { task in
                let plane = task / bands, band = task % bands
                body(plane, band, (rows * band / bands)..<(rows * (band + 1) / bands))
            }
        }
    }
}

/// Asks Linux to back the 2 MB pages inside `buffer` with huge pages. A fresh 45 MB output
/// (4 masks at 1365 x 2048) otherwise takes ~11,000 faults of 4 KB pages on first write, which
/// took 10-15 ms on a 2-core machine, close to the resize itself. A hint only: values are
/// unaffected, and it changes nothing where transparent huge pages are off (or on for everything).
func adviseHugePages(_ buffer: UnsafeMutableRawBufferPointer) {
    #if canImport(Glibc)
    let huge = 2 << 20
    guard let base = buffer.baseAddress, buffer.count >= 4 * huge else { return }
    let start = (Int(bitPattern: base) + huge - 1) & -huge
    let end = (Int(bitPattern: base) + buffer.count) & -huge
    _ = madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, MADV_HUGEPAGE)
    #endif
}

/// How many of a mask's full-size logits lie above the threshold raised by an offset, and above it
/// lowered by the offset: their ratio is the mask's stability score.
package struct StabilityCounts: Sendable, Equatable {
    package var above: Int
    package var aboveLowered: Int

    package init(above: Int, aboveLowered: Int) {
        self.above = above
        self.aboveLowered = aboveLowered
    }

    /// ref: amg.py calculate_stability_score: intersections / unions in float32 (0/0 is NaN, as upstream's).
    package var score: Float { Float(above) / Float(aboveLowered) }
}

/// Boolean masks [count, height, width], one byte per pixel (0 or 1).
public struct BinaryMasks: Sendable, Equatable {
    /// Number of masks.
    public let count: Int
    /// Rows of each mask, in pixels.
    public let height: Int
    /// Columns of each mask, in pixels.
    public let width: Int
    /// `count * height * width` values, 1 where the logit exceeds the threshold.
    public var values: [UInt8]

    /// Wraps `values`, which must hold `count * height * width` bytes (mask by mask, rows top to bottom).
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
/// to give the same bits as torch 2.15 on x86-64 (verified against it on the full-size set's masks).
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
package enum TorchBilinear {
    /// `a * b + c` with one rounding, as the FMA instruction torch's kernel uses.
    /// Swift's `addingProduct` is a libm call on baseline x86-64 (no FMA in the target), which
    /// would dominate this kernel. In double, `a * b` is exact and the sum rounds once; rounding
    /// that double to float gives the single-rounded result except when the double sits exactly
    /// halfway between two floats after being rounded itself. TwoSum gives the exact error of the
    /// double sum; in that case a one-ulp nudge toward the exact value fixes the float rounding.
    /// Results in float's subnormal range, where midpoints sit elsewhere, take the libm path.
    /// Builds with FMA (`make`'s CPU_FLAGS add -DSAM_FMA) use the instruction itself.
    @inline(__always)
    static func fma(_ a: Float, _ b: Float, _ c: Float) -> Float {
        #if SAM_FMA
        return c.addingProduct(a, b)
        #else
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
        #endif
    }

    /// The two taps and weights of each output index along one axis.
    package struct Axis {
        package let index0: [Int]
        package let index1: [Int]
        package let weight0: [Float]
        package let weight1: [Float]

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

    /// The row and column taps of an (inRows, inCols) -> (outRows, outCols) resize, as torch picks
    /// its kernel by the output's size.
    package static func axes(inRows: Int, inCols: Int, outRows: Int, outCols: Int) -> (rows: Axis, cols: Axis) {
        // ref: UpSampleKernel.cpp _use_vectorized_kernel_cond_2d: (output H + output W) <= 128
        let smallOutput = outRows + outCols <= 128
        return (Axis(inSize: inRows, outSize: outRows, fusedSourceIndex: smallOutput),
                Axis(inSize: inCols, outSize: outCols, fusedSourceIndex: smallOutput))
    }

    /// One 2-D resize, producing only output rows `0..<keepRows` and columns `0..<keepCols`
    /// of an (outRows, outCols) result: a crop of the full resize, with identical values.
    struct Plan2D {
        let rows: Axis
        let cols: Axis
        let keepRows: Int, keepCols: Int
        /// Output columns `0..<adjacentCols` read two neighbouring input columns
        /// (index1 == index0 + 1); past them, the right edge clamps both taps to one column.
        let adjacentCols: Int
        /// The first columns in sixteen-lane blocks, where the CPU and the scale allow.
        let widthBlocks: WidthBlocks?

        init(inRows: Int, inCols: Int, outRows: Int, outCols: Int, keepRows: Int, keepCols: Int) {
            self.keepRows = keepRows
            self.keepCols = keepCols
            (rows, cols) = TorchBilinear.axes(inRows: inRows, inCols: inCols, outRows: outRows, outCols: outCols)
            let cols = cols
            adjacentCols = (0..<keepCols).first { cols.index1[$0] != cols.index0[$0] + 1 } ?? keepCols
            widthBlocks = WidthBlocks(cols, inSize: inCols, keepCols: keepCols)
        }

        /// Output row `y` into `out` (`keepCols` floats): the blend of two width-resized input
        /// rows, cached in `scratch`. `inputRow(i)` gives input row i, valid until its next call.
        /// `streamingStores`: `out` is a final output, not read again soon (same values).
        @inline(__always)
        func resizeRow(_ y: Int, into out: UnsafeMutablePointer<Float>, scratch: inout Scratch,
                       streamingStores: Bool = false, inputRow: (Int) -> UnsafePointer<Float>) {
            let top = rows.index0[y], bottom = rows.index1[y]
            let taps = scratch.taps
            let topRow = scratch.pair.row(top, keeping: bottom) { resizeWidth(inputRow(top), into: $0, taps: taps) }
            let bottomRow = scratch.pair.row(bottom, keeping: top) { resizeWidth(inputRow(bottom), into: $0, taps: taps) }
            let w0 = rows.weight0[y], w1 = rows.weight1[y]
            if streamingStores && TorchBilinear.wideVectors {
                return sam_blend_rows_streaming_avx512(topRow, w0, bottomRow, w1, Int64(keepCols), out)
            }
            // fma(t0, h0, t1 * h1), as torch's contracted `t0 * h0 + t1 * h1`
            TorchBilinear.fmaRow(keepCols, into: out) { x in (topRow[x], w0, bottomRow[x], w1) }
        }

        /// One input row resized along x to `keepCols` floats; `taps` holds 2 * keepCols floats.
        private func resizeWidth(_ source: UnsafePointer<Float>, into target: UnsafeMutablePointer<Float>,
                                 taps: UnsafeMutablePointer<Float>) {
            // The first outputs in sixteen-lane blocks where possible; the rest below.
            let first = widthBlocks?.outputs ?? 0
            widthBlocks?.run(source, into: target)
            // The two taps of output x go to taps[2x], taps[2x + 1] first, so that the arithmetic
            // runs on contiguous floats and vectorizes. Neighbouring taps move as one 8-byte copy.
            cols.index0.withUnsafeBufferPointer { i0 in
                for x in min(first, adjacentCols)..<adjacentCols {
                    let pair = UnsafeRawPointer(source + i0[x]).loadUnaligned(as: UInt64.self)
                    UnsafeMutableRawPointer(taps + 2 * x).storeBytes(of: pair, as: UInt64.self)
                }
            }
            for x in max(first, adjacentCols)..<keepCols {
                taps[2 * x] = source[cols.index0[x]]
                taps[2 * x + 1] = source[cols.index1[x]]
            }
            cols.weight0.withUnsafeBufferPointer { w0 in cols.weight1.withUnsafeBufferPointer { w1 in
                // fma(x0, w0, x1 * w1), as torch's contracted `x0 * w0 + x1 * w1`
                TorchBilinear.fmaRow(keepCols - first, into: target + first) { x in
                    (taps[2 * (first + x)], w0[first + x], taps[2 * (first + x) + 1], w1[first + x])
                }
            }}
        }

        /// Working rows for a run of `resizeRow` calls: the cached pair of width-resized rows,
        /// the gathered taps of one row, and a spare output row for callers.
        struct Scratch {
            var pair: RowPair
            let taps: UnsafeMutablePointer<Float>
            let row: UnsafeMutablePointer<Float>
        }

        /// Runs `body` with a fresh `Scratch` (five rows of `keepCols` floats).
        func withScratch(_ body: (inout Scratch) -> Void) {
            withUnsafeTemporaryAllocation(of: Float.self, capacity: 5 * keepCols) { buffer in
                let base = buffer.baseAddress!
                var scratch = Scratch(pair: RowPair(base, base + keepCols), taps: base + 2 * keepCols, row: base + 4 * keepCols)
                body(&scratch)
            }
        }
    }

    /// The two width-resized input rows the current output row blends. Consecutive output rows
    /// read the same or the next input rows, so each width resize runs once per band of rows.
    struct RowPair {
        private let slots: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>)
        /// The input row each slot holds, -1 for none.
        private var held = (-1, -1)

        init(_ first: UnsafeMutablePointer<Float>, _ second: UnsafeMutablePointer<Float>) {
            slots = (first, second)
        }

        /// Input row `row`, computed by `fill` unless held; never evicts row `keeping`.
        @inline(__always)
        mutating func row(_ row: Int, keeping: Int, fill: (UnsafeMutablePointer<Float>) -> Void) -> UnsafePointer<Float> {
            if held.0 == row { return UnsafePointer(slots.0) }
            if held.1 == row { return UnsafePointer(slots.1) }
            if held.0 == keeping {
                fill(slots.1)
                held.1 = row
                return UnsafePointer(slots.1)
            }
            fill(slots.0)
            held.0 = row
            return UnsafePointer(slots.0)
        }
    }

    /// `out[x] = fma(a, b, c * d)` for `(a, b, c, d) = operands(x)`, x in 0..<count, bit for
    /// bit as `fma` gives. `fma`'s branches keep the compiler from vectorizing it, so blocks of
    /// elements take its common case (the double sum rounded once to float) in a loop that
    /// vectorizes, and a block where any element may need more is redone with `fma`.
    /// `out` must not overlap the operands: a row's last block may overlap the one before it
    /// and recompute some elements.
    /// With the FMA instruction (SAM_FMA) this is one loop that vectorizes as it stands.
    @inline(__always)
    static func fmaRow(_ count: Int, into out: UnsafeMutablePointer<Float>, _ operands: (Int) -> (Float, Float, Float, Float)) {
        #if SAM_FMA
        fmaExact(0..<count, out, operands)
        #else
        let block = 64
        guard count >= block else { return fmaExact(0..<count, out, operands) }
        // Rounding midpoints are rare unless the weights have few bits (exact sums, often
        // ties); only then is the costlier test that tells exact ties apart worth running.
        var midpointsSeen = false
        var start = 0
        while true {
            if !midpointsSeen {
                midpointsSeen = fmaBlock(start, block, out, operands, check: mayNeedTwoSum) != 0
            }
            if midpointsSeen && fmaBlock(start, block, out, operands, check: mayDiffer) != 0 {
                fmaExact(start..<(start + block), out, operands)
            }
            if start + block == count { return }
            start = min(start + block, count - block)
        }
        #endif
    }

    /// `out[x] = fma(a, b, c * d)` for x in `range`, one element at a time.
    @inline(__always)
    static func fmaExact(_ range: Range<Int>, _ out: UnsafeMutablePointer<Float>, _ operands: (Int) -> (Float, Float, Float, Float)) {
        for x in range {
            let (a, b, c, d) = operands(x)
            out[x] = fma(a, b, c * d)
        }
    }

    /// `out[x] = Float(a * b + c * d)` (in double) for x in start..<start + count, and the OR
    /// of `check` over those elements.
    @inline(__always)
    static func fmaBlock(_ start: Int, _ count: Int, _ out: UnsafeMutablePointer<Float>,
                         _ operands: (Int) -> (Float, Float, Float, Float),
                         check: (Double, Double, Double, Float) -> UInt32) -> UInt32 {
        var flags: UInt32 = 0
        for x in start..<(start + count) {
            let (a, b, c, d) = operands(x)
            let product = Double(a) * Double(b), addend = Double(c * d)
            let sum = product + addend
            let result = Float(sum)
            out[x] = result
            flags |= check(product, addend, sum, result)
        }
        return flags
    }

    /// 0 when `result = Float(sum)`, `sum = product + addend` in double, is what `fma` returns,
    /// else 1. `fma` returns something else only for a rounding midpoint with a nonzero TwoSum
    /// error, or a sum in float's subnormal range; the test for the latter also catches
    /// results of 2^-126, which is harmless. Branch-free (0 or 1, no `&&`) so loops vectorize.
    @inline(__always)
    static func mayDiffer(product: Double, addend: Double, sum: Double, result: Float) -> UInt32 {
        // ref: fma (TwoSum)
        let addendPart = sum - product
        let error = (product - (sum - addendPart)) + (addend - addendPart)
        let inexact: UInt32 = error != 0 ? 1 : 0
        return (isMidpoint(sum) & inexact) | isTiny(sum, result)
    }

    /// `mayDiffer` without the TwoSum: also 1 for midpoints the double sum hits exactly.
    @inline(__always)
    static func mayNeedTwoSum(product: Double, addend: Double, sum: Double, result: Float) -> UInt32 {
        isMidpoint(sum) | isTiny(sum, result)
    }

    /// 1 when `sum` lies halfway between two floats, else 0.
    @inline(__always)
    static func isMidpoint(_ sum: Double) -> UInt32 {
        UInt32(truncatingIfNeeded: sum.bitPattern) & 0x1FFF_FFFF == 0x1000_0000 ? 1 : 0
    }

    /// 1 when `sum` is nonzero and `result = Float(sum)` has exponent field 0 or 1, i.e.
    /// |result| <= 2^-126, else 0. Every nonzero |sum| < 2^-126 (`fma`'s libm case) rounds to
    /// such a result.
    @inline(__always)
    static func isTiny(_ sum: Double, _ result: Float) -> UInt32 {
        let small: UInt32 = result.bitPattern & 0x7F00_0000 == 0 ? 1 : 0
        let nonzero: UInt32 = sum != 0 ? 1 : 0
        return small & nonzero
    }
}
