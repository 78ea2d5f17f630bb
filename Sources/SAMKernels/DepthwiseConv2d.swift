import CVectorMath
import SAMTensor

extension Kernels {
    /// Depthwise convolution (groups == in == out): each channel plane is convolved with its own
    /// kh x kw filter. Direct loops, parallel over planes; 3x3 kernels (TinyViT's MBConv) take
    /// a fused nine-tap path specialised for strides 1 and 2, other kernels at stride 1 a
    /// zero-padded copy of the plane (`depthwisePaddedPlane`). The epilogue runs on each plane
    /// right after it is computed, while it is in cache.
    static func depthwiseConv(_ x: FloatTensor, weight: FloatTensor, bias: FloatTensor?,
                              geometry g: ConvGeometry, outShape: [Int], epilogue: Epilogue) -> FloatTensor {
        let channels = x.shape[1], planes = x.shape[0] * channels
        let inPlaneSize = g.inHeight * g.inWidth, outPlaneSize = g.outHeight * g.outWidth
        let outCount = planes * outPlaneSize
        guard outCount > 0 else { return FloatTensor(zeros: outShape) }
        let taps = g.kernelHeight * g.kernelWidth
        let is3x3 = g.kernelHeight == 3 && g.kernelWidth == 3
        let biases = bias?.data ?? [Float](repeating: 0, count: channels)
        // Both plane kernels write every output element, so the output starts uninitialised and
        // each page is first touched by the thread computing it.
        let data = [Float](unsafeUninitializedCapacity: outCount) { outBuffer, initializedCount in
            withResidual(epilogue) { residual in
            x.data.withUnsafeBufferPointer { xBuffer in
                weight.data.withUnsafeBufferPointer { weightBuffer in
                    biases.withUnsafeBufferPointer { biasBuffer in
                        let xBase = xBuffer.baseAddress!, outBase = outBuffer.baseAddress!
                        let weightBase = weightBuffer.baseAddress!, biasBase = biasBuffer.baseAddress!
                        parallelFor(planes) { plane in
                            let c = plane % channels
                            let input = xBase + plane * inPlaneSize
                            let out = outBase + plane * outPlaneSize
                            if is3x3 {
                                depthwise3x3Plane(input, out, filter: weightBase + c * taps, bias: biasBase[c], geometry: g)
                            } else if g.stride == 1 {
                                depthwisePaddedPlane(input, out, filter: weightBase + c * taps, bias: biasBase[c], geometry: g)
                            } else {
                                depthwisePlane(input, out, filter: weightBase + c * taps, bias: biasBase[c], geometry: g)
                            }
                            applyEpilogue(epilogue.activation, out, count: outPlaneSize,
                                          residual: residual.map { $0 + plane * outPlaneSize })
                        }
                    }
                }
            }
            }
            initializedCount = outCount
        }
        return FloatTensor(shape: outShape, data: data)
    }

    /// Any kernel size and stride (the stride-1 kernels other than 3x3 take `depthwisePaddedPlane`):
    /// for each output row, accumulate one kernel tap at a time over the run of output columns
    /// where that tap lands inside the image (a strided axpy, no per-pixel bounds checks).
    private static func depthwisePlane(_ input: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>,
                                       filter: UnsafePointer<Float>, bias: Float, geometry g: ConvGeometry) {
        let stride = g.stride, width = g.inWidth
        let columnRanges = (0..<g.kernelWidth).map { g.validColumns(tap: $0) }
        for oy in 0..<g.outHeight {
            let outRow = out + oy * g.outWidth
            outRow.initialize(repeating: bias, count: g.outWidth)
            for i in 0..<g.kernelHeight {
                let iy = oy * stride - g.padding + i
                guard iy >= 0 && iy < g.inHeight else { continue }
                let inRow = input + iy * width
                for j in 0..<g.kernelWidth {
                    let tapWeight = filter[i * g.kernelWidth + j]
                    let shift = j - g.padding
                    let (start, end) = columnRanges[j]
                    for ox in start..<end { outRow[ox] += tapWeight * inRow[ox * stride + shift] }
                }
            }
        }
    }

    /// Any kernel size at stride 1: the plane copied into a zero-padded one, so every tap reads
    /// whole runs, and eight outputs summed in a register over all taps. (EfficientViT's 5x5 over
    /// 16x16 planes ran at ~5 GFLOP/s in `depthwisePlane`, whose runs clipped at the borders are
    /// mostly scalar tails and whose every tap reloads and stores the output row.) The taps add
    /// in `depthwisePlane`'s order; the padding's taps add zeros.
    private static func depthwisePaddedPlane(_ input: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>,
                                             filter: UnsafePointer<Float>, bias: Float, geometry g: ConvGeometry) {
        let paddedWidth = g.inWidth + 2 * g.padding, paddedHeight = g.inHeight + 2 * g.padding
        withUnsafeTemporaryAllocation(of: Float.self, capacity: paddedWidth * paddedHeight) { buffer in
            let padded = buffer.baseAddress!
            padded.initialize(repeating: 0, count: paddedWidth * paddedHeight)
            for y in 0..<g.inHeight {
                (padded + (y + g.padding) * paddedWidth + g.padding).update(from: input + y * g.inWidth, count: g.inWidth)
            }
            for oy in 0..<g.outHeight {
                let outRow = out + oy * g.outWidth, top = UnsafePointer(padded + oy * paddedWidth)
                // Eight outputs summed in a register over every tap, then stored once.
                var ox = 0
                while ox + 8 <= g.outWidth {
                    var sum = SIMD8<Float>(repeating: bias)
                    for i in 0..<g.kernelHeight {
                        let inRow = top + i * paddedWidth + ox
                        for j in 0..<g.kernelWidth { sum += SIMD8(repeating: filter[i * g.kernelWidth + j]) * inRow.load8(at: j) }
                    }
                    outRow.store8(sum, at: ox)
                    ox += 8
                }
                for ox in ox..<g.outWidth {
                    var sum = bias
                    for i in 0..<g.kernelHeight {
                        for j in 0..<g.kernelWidth { sum += filter[i * g.kernelWidth + j] * top[i * paddedWidth + ox + j] }
                    }
                    outRow[ox] = sum
                }
            }
        }
    }

    /// 3x3 kernel: interior pixels sum all nine taps in one pass (one store per output);
    /// the border ring, where some taps fall in the padding, uses checked per-pixel code.
    private static func depthwise3x3Plane(_ input: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>,
                                          filter: UnsafePointer<Float>, bias: Float, geometry g: ConvGeometry) {
        // Interior = outputs whose taps 0 and 2 (hence all three) are inside the image.
        let interiorColumns = g.validColumns(tap: 0).0..<max(g.validColumns(tap: 0).0, g.validColumns(tap: 2).1)
        let interiorRows = g.validRows(tap: 0).0..<max(g.validRows(tap: 0).0, g.validRows(tap: 2).1)
        let k = (filter[0], filter[1], filter[2], filter[3], filter[4], filter[5], filter[6], filter[7], filter[8])
        for oy in 0..<g.outHeight {
            let outRow = out + oy * g.outWidth
            guard interiorRows.contains(oy) else {
                for ox in 0..<g.outWidth { outRow[ox] = borderPixel(input, filter: filter, bias: bias, oy: oy, ox: ox, geometry: g) }
                continue
            }
            let top = input + (oy * g.stride - g.padding) * g.inWidth
            depthwise3x3Row((top, top + g.inWidth, top + 2 * g.inWidth), outRow, columns: interiorColumns, stride: g.stride,
                            padding: g.padding, k: k, bias: bias)
            for ox in 0..<interiorColumns.lowerBound {
                outRow[ox] = borderPixel(input, filter: filter, bias: bias, oy: oy, ox: ox, geometry: g)
            }
            for ox in interiorColumns.upperBound..<g.outWidth {
                outRow[ox] = borderPixel(input, filter: filter, bias: bias, oy: oy, ox: ox, geometry: g)
            }
        }
    }

    /// Whether `depthwise3x3Row` runs on CVectorMath's sixteen lanes: AVX-512 (and SAM_CPU_CAP allows it).
    static let depthwiseRowsOnSixteenLanes = sam_vector_math_has_avx512() != 0

    /// One output row of a 3x3 depthwise convolution over the input rows `rows` (top, middle,
    /// bottom): out[ox] = bias + the nine taps at columns ox*stride - padding ... + 2, for the
    /// output columns `columns`, whose taps must all lie inside the rows.
    static func depthwise3x3Row(_ rows: (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>),
                                _ outRow: UnsafeMutablePointer<Float>, columns: Range<Int>, stride: Int, padding: Int,
                                k: (Float, Float, Float, Float, Float, Float, Float, Float, Float), bias: Float) {
        // Sixteen lanes where the CPU has them: the same multiplies and adds as the loop below (which
        // the compiler runs on eight), so the same bits in every build.
        if depthwiseRowsOnSixteenLanes && (stride == 1 || stride == 2) && !columns.isEmpty {
            withUnsafePointer(to: k) { taps in
                taps.withMemoryRebound(to: Float.self, capacity: 9) { taps in
                    sam_depthwise3x3_row_avx512(rows.0, rows.1, rows.2, outRow, Int64(columns.lowerBound), Int64(columns.upperBound),
                                                Int64(stride), Int64(padding), taps, bias)
                }
            }
            return
        }
        // Literal strides let the compiler specialise (and vectorise) the common cases.
        switch stride {
        case 1: depthwise3x3Row(rows, outRow, columns: columns, literalStride: 1, padding: padding, k: k, bias: bias)
        case 2: depthwise3x3Row(rows, outRow, columns: columns, literalStride: 2, padding: padding, k: k, bias: bias)
        default: depthwise3x3Row(rows, outRow, columns: columns, literalStride: stride, padding: padding, k: k, bias: bias)
        }
    }

    @inline(__always)
    private static func depthwise3x3Row(_ rows: (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>),
                                        _ outRow: UnsafeMutablePointer<Float>, columns: Range<Int>, literalStride stride: Int,
                                        padding: Int, k: (Float, Float, Float, Float, Float, Float, Float, Float, Float),
                                        bias: Float) {
        let (top, middle, bottom) = rows
        for ox in columns {
            let ix = ox * stride - padding
            var sum = bias
            sum += k.0 * top[ix] + k.1 * top[ix + 1] + k.2 * top[ix + 2]
            sum += k.3 * middle[ix] + k.4 * middle[ix + 1] + k.5 * middle[ix + 2]
            sum += k.6 * bottom[ix] + k.7 * bottom[ix + 1] + k.8 * bottom[ix + 2]
            outRow[ox] = sum
        }
    }

    /// One output pixel with bounds checks on every tap (for the border ring).
    private static func borderPixel(_ input: UnsafePointer<Float>, filter: UnsafePointer<Float>, bias: Float,
                                    oy: Int, ox: Int, geometry g: ConvGeometry) -> Float {
        var sum = bias
        for i in 0..<g.kernelHeight {
            let iy = oy * g.stride - g.padding + i
            guard iy >= 0 && iy < g.inHeight else { continue }
            for j in 0..<g.kernelWidth {
                let ix = ox * g.stride - g.padding + j
                guard ix >= 0 && ix < g.inWidth else { continue }
                sum += filter[i * g.kernelWidth + j] * input[iy * g.inWidth + ix]
            }
        }
        return sum
    }
}
