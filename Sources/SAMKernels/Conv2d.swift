import SAMTensor

extension Kernels {
    /// PyTorch nn.Conv2d on NCHW input with zero padding: weight [out, in/groups, kh, kw],
    /// bias [out] or nil, the same stride and padding on both axes.
    ///
    /// Picks a path by shape: 1x1 stride-1 unpadded ungrouped convolutions are one sgemm per
    /// image; depthwise convolutions (groups == in == out) use a direct loop kernel; everything
    /// else goes through im2col + sgemm, one group at a time: in parallel bands of output rows
    /// when the weights are small, else whole row tiles with a threaded sgemm. The tiled paths
    /// (1x1 tiles, im2col bands) run each tile on the panel product instead of sgemm where
    /// `channelProductPanelsChosen`. `epilogue` (residual add, then activation) is applied to each
    /// piece of output as it is finished.
    ///
    /// `int8`: the weight's int8 codes as an [out, in] matrix (a pointwise convolution stored int8);
    /// with int8 products on, a pointwise convolution runs on them (`int8PointwiseConv`).
    package static func conv2d(_ x: FloatTensor, weight: FloatTensor, bias: FloatTensor?,
                              stride: Int = 1, padding: Int = 0, groups: Int = 1,
                              epilogue: Epilogue = .none, int8: QuantizedWeight? = nil) -> FloatTensor {
        precondition(x.shape.count == 4, "conv2d: input must be NCHW, got \(x.shape)")
        precondition(weight.shape.count == 4, "conv2d: weight must be [out, in/groups, kh, kw], got \(weight.shape)")
        precondition(stride >= 1 && padding >= 0 && groups >= 1, "conv2d: bad stride/padding/groups")
        let geometry = ConvGeometry(input: x.shape, weight: weight.shape, stride: stride, padding: padding)
        let inChannels = x.shape[1], outChannels = weight.shape[0]
        precondition(inChannels % groups == 0 && outChannels % groups == 0 && weight.shape[1] * groups == inChannels,
                     "conv2d: weight \(weight.shape) does not fit \(inChannels) input channels in \(groups) groups")
        if let bias { precondition(bias.count == outChannels, "conv2d: bias \(bias.shape) for \(outChannels) outputs") }

        let outShape = [x.shape[0], outChannels, geometry.outHeight, geometry.outWidth]
        epilogue.check(outputShape: outShape, "conv2d")
        if groups == inChannels && outChannels == inChannels {
            return depthwiseConv(x, weight: weight, bias: bias, geometry: geometry, outShape: outShape, epilogue: epilogue)
        }
        let isPointwise = groups == 1 && geometry.kernelHeight == 1 && geometry.kernelWidth == 1 && stride == 1 && padding == 0
        if isPointwise, let int8, let output = int8PointwiseConv(x, weight: int8, bias: bias, epilogue: epilogue) {
            return output
        }
        if isPointwise, x.count > 0, let output = tiledPointwiseConv(x, weight: weight, bias: bias, epilogue: epilogue) {
            return output
        }
        if !isPointwise, x.count > 0, outShape.reduce(1, *) > 0,
           let output = tiledIm2colConv(x, weight: weight, bias: bias, groups: groups, geometry: geometry,
                                        outShape: outShape, epilogue: epilogue) {
            return output
        }
        // The GEMM paths accumulate onto the bias (beta = 1).
        var output = biasSeededNCHW(outShape, bias: bias)
        guard output.count > 0, x.count > 0 else {
            applyEpilogue(epilogue, to: &output)
            return output
        }
        if isPointwise {
            pointwiseConv(x, weight: weight, into: &output)
            applyEpilogue(epilogue, to: &output)
        } else {
            im2colConv(x, weight: weight, groups: groups, geometry: geometry, epilogue: epilogue, into: &output)
        }
        return output
    }

    /// 1x1 convolution on a large image, made in tiles of pixels, in parallel: each tile of the
    /// [O, HW] output is seeded with the bias, gets weight [O, C] * x [C, tile] added (one
    /// single-threaded sgemm) and the epilogue while it is in cache. Nil when the image is too
    /// small to give every worker a few tiles.
    private static func tiledPointwiseConv(_ x: FloatTensor, weight: FloatTensor, bias: FloatTensor?,
                                           epilogue: Epilogue) -> FloatTensor? {
        let batch = x.shape[0], inChannels = x.shape[1], pixels = x.shape[2] * x.shape[3]
        let outChannels = weight.shape[0]
        // About 256 KB of output per tile, a whole number of 16-pixel register tiles.
        let tilePixels = max(64, 65_536 / outChannels) / 16 * 16
        let tilesPerImage = (pixels + tilePixels - 1) / tilePixels
        let tiles = batch * tilesPerImage
        guard tiles >= 2 * workerCount else { return nil }
        let count = batch * outChannels * pixels
        let onPanels = channelProductPanelsChosen
        let data = productOutput(count: count, x: x, weight: weight, bias: bias, epilogue: epilogue) { p in
            parallelForChunks(tiles) { range in
                let product = ChannelProductTiles(onPanels: onPanels)
                for tile in range {
                    let n = tile / tilesPerImage
                    let first = (tile % tilesPerImage) * tilePixels, width = min(tilePixels, pixels - first)
                    let offset = n * outChannels * pixels + first
                    product(weight: p.weight, bias: p.bias, outChannels: outChannels, inChannels: inChannels,
                            x: p.x + n * inChannels * pixels + first, xStride: pixels, pixels: width,
                            into: p.out + offset, outStride: pixels,
                            activation: epilogue.activation, residual: p.residual.map { $0 + offset })
                }
            }
        }
        return FloatTensor(shape: [batch, outChannels, x.shape[2], x.shape[3]], data: data)
    }

    /// 1x1 convolution: out[n] [O, HW] += weight [O, C] * x[n] [C, HW]. The image is already the
    /// GEMM's right-hand matrix, so no copy is needed.
    private static func pointwiseConv(_ x: FloatTensor, weight: FloatTensor, into output: inout FloatTensor) {
        let batch = x.shape[0], inChannels = x.shape[1], pixels = x.shape[2] * x.shape[3]
        let outChannels = weight.shape[0]
        x.data.withUnsafeBufferPointer { xBuffer in
            weight.data.withUnsafeBufferPointer { weightBuffer in
                output.data.withUnsafeMutableBufferPointer { outBuffer in
                    for n in 0..<batch {
                        gemm(transA: false, transB: false, m: outChannels, n: pixels, k: inChannels, alpha: 1,
                                   a: weightBuffer.baseAddress!, lda: inChannels,
                                   b: xBuffer.baseAddress! + n * inChannels * pixels, ldb: pixels,
                                   beta: 1, c: outBuffer.baseAddress! + n * outChannels * pixels, ldc: pixels)
                    }
                }
            }
        }
    }

    /// A convolution whose weights are small (the patch embedding's stride-2 3x3 convs), made in
    /// bands of output rows, in parallel: each band's patch columns are unfolded into the
    /// worker's own cache-sized buffer, then seeded with the bias, multiplied (one
    /// single-threaded sgemm) and finished with the epilogue while still in cache. Unfolding the
    /// whole image first and running one big threaded sgemm (`im2colConv`) streams the columns
    /// and the output through memory twice. Nil when the weights are too large to share the
    /// cache with a band (each band would repack them) or there are too few bands.
    private static func tiledIm2colConv(_ x: FloatTensor, weight: FloatTensor, bias: FloatTensor?, groups: Int,
                                        geometry g: ConvGeometry, outShape: [Int], epilogue: Epilogue) -> FloatTensor? {
        let batch = x.shape[0], inChannels = x.shape[1], outChannels = weight.shape[0]
        let groupInChannels = inChannels / groups, groupOutChannels = outChannels / groups
        let patchSize = groupInChannels * g.kernelHeight * g.kernelWidth   // GEMM k
        guard groupOutChannels * patchSize <= 32_768 else { return nil }
        // About 256 KB of columns per band, but at least one output row.
        let bandRows = max(1, min(g.outHeight, 65_536 / (patchSize * g.outWidth)))
        let bandsPerPlane = (g.outHeight + bandRows - 1) / bandRows
        let tiles = batch * groups * bandsPerPlane
        guard tiles >= 2 * workerCount else { return nil }
        let outPixels = g.outHeight * g.outWidth
        let onPanels = channelProductPanelsChosen
        let data = productOutput(count: outShape.reduce(1, *), x: x, weight: weight, bias: bias, epilogue: epilogue) { p in
            parallelForChunks(tiles) { range in
                let columns = UnsafeMutablePointer<Float>.allocate(capacity: patchSize * bandRows * g.outWidth)
                defer { columns.deallocate() }
                let product = ChannelProductTiles(onPanels: onPanels)
                for tile in range {
                    let band = tile % bandsPerPlane, group = (tile / bandsPerPlane) % groups, n = tile / (bandsPerPlane * groups)
                    let firstRow = band * bandRows, rows = min(bandRows, g.outHeight - firstRow)
                    let tilePixels = rows * g.outWidth
                    let input = p.x + (n * inChannels + group * groupInChannels) * g.inHeight * g.inWidth
                    for patchRow in 0..<patchSize {
                        im2colRow(patchRow, input, geometry: g, outRows: firstRow..<(firstRow + rows),
                                  into: columns + patchRow * tilePixels)
                    }
                    // The band is columns firstRow*OW ..< (firstRow+rows)*OW of the group's [O/g, OH*OW] output.
                    let offset = (n * outChannels + group * groupOutChannels) * outPixels + firstRow * g.outWidth
                    product(weight: p.weight + group * groupOutChannels * patchSize,
                                   bias: p.bias.map { $0 + group * groupOutChannels },
                                   outChannels: groupOutChannels, inChannels: patchSize,
                                   x: columns, xStride: tilePixels, pixels: tilePixels,
                                   into: p.out + offset, outStride: outPixels,
                                   activation: epilogue.activation, residual: p.residual.map { $0 + offset })
                }
            }
        }
        return FloatTensor(shape: outShape, data: data)
    }

    /// General convolution: unfold input patches into columns (im2col), then one sgemm per
    /// group and tile: out [O/g, pixels] += weight [O/g, C/g*kh*kw] * columns [C/g*kh*kw, pixels].
    /// Output rows are processed in tiles so the column buffer stays bounded on large images.
    private static func im2colConv(_ x: FloatTensor, weight: FloatTensor, groups: Int,
                                   geometry g: ConvGeometry, epilogue: Epilogue, into output: inout FloatTensor) {
        let batch = x.shape[0], inChannels = x.shape[1]
        let outChannels = weight.shape[0]
        let groupInChannels = inChannels / groups, groupOutChannels = outChannels / groups
        let patchSize = groupInChannels * g.kernelHeight * g.kernelWidth   // GEMM k
        let outPixels = g.outHeight * g.outWidth
        // About 4M floats (16 MB) of columns per tile, but at least one output row.
        let tileRows = max(1, min(g.outHeight, (1 << 22) / max(1, patchSize * g.outWidth)))
        // im2col writes every element of a tile, so the buffer needs no initial fill.
        let columnBase = UnsafeMutablePointer<Float>.allocate(capacity: patchSize * tileRows * g.outWidth)
        defer { columnBase.deallocate() }

        withResidual(epilogue) { residual in
        x.data.withUnsafeBufferPointer { xBuffer in
            weight.data.withUnsafeBufferPointer { weightBuffer in
                output.data.withUnsafeMutableBufferPointer { outBuffer in
                    for n in 0..<batch {
                        for group in 0..<groups {
                            let groupInput = xBuffer.baseAddress! + (n * inChannels + group * groupInChannels) * g.inHeight * g.inWidth
                            let groupWeight = weightBuffer.baseAddress! + group * groupOutChannels * patchSize
                            let groupOutput = outBuffer.baseAddress! + (n * outChannels + group * groupOutChannels) * outPixels
                            for firstRow in Swift.stride(from: 0, to: g.outHeight, by: tileRows) {
                                let rows = min(tileRows, g.outHeight - firstRow)
                                let tilePixels = rows * g.outWidth
                                im2col(groupInput, channels: groupInChannels, geometry: g,
                                       outRows: firstRow..<(firstRow + rows), into: columnBase)
                                // The tile's outputs are columns firstRow*OW ..< (firstRow+rows)*OW of
                                // the [O/g, OH*OW] output matrix, hence ldc = OH*OW.
                                gemm(transA: false, transB: false,
                                           m: groupOutChannels, n: tilePixels, k: patchSize, alpha: 1,
                                           a: groupWeight, lda: patchSize,
                                           b: columnBase, ldb: tilePixels,
                                           beta: 1, c: groupOutput + firstRow * g.outWidth, ldc: outPixels)
                                guard !epilogue.isIdentity else { continue }
                                // The tile's rows of every output channel of the group.
                                parallelFor(groupOutChannels) { channel in
                                    let offset = (n * outChannels + group * groupOutChannels + channel) * outPixels
                                        + firstRow * g.outWidth
                                    applyEpilogue(epilogue.activation, outBuffer.baseAddress! + offset, count: tilePixels,
                                                  residual: residual.map { $0 + offset })
                                }
                            }
                        }
                    }
                }
            }
        }
        }
    }

    /// Writes the [channels * kh * kw, rows * outWidth] patch matrix for output rows `outRows`,
    /// one patch row per task.
    private static func im2col(_ input: UnsafePointer<Float>, channels: Int, geometry g: ConvGeometry,
                               outRows: Range<Int>, into columns: UnsafeMutablePointer<Float>) {
        let tilePixels = outRows.count * g.outWidth
        parallelFor(channels * g.kernelHeight * g.kernelWidth) { patchRow in
            im2colRow(patchRow, input, geometry: g, outRows: outRows, into: columns + patchRow * tilePixels)
        }
    }

    /// Writes row `patchRow` = (c, i, j) of the patch matrix for output rows `outRows`: input pixel
    /// (c, oy*s - p + i, ox*s - p + j) for every output pixel (oy, ox), zero where the window
    /// hangs over the padding.
    @inline(__always)
    private static func im2colRow(_ patchRow: Int, _ input: UnsafePointer<Float>, geometry g: ConvGeometry,
                                  outRows: Range<Int>, into destination: UnsafeMutablePointer<Float>) {
        let kernelArea = g.kernelHeight * g.kernelWidth
        let c = patchRow / kernelArea
        let i = (patchRow % kernelArea) / g.kernelWidth
        let j = patchRow % g.kernelWidth
        let plane = input + c * g.inHeight * g.inWidth
        let (oxStart, oxEnd) = g.validColumns(tap: j)
        for (tileRow, oy) in outRows.enumerated() {
            let row = destination + tileRow * g.outWidth
            let iy = oy * g.stride - g.padding + i
            guard iy >= 0 && iy < g.inHeight, oxStart < oxEnd else {
                row.update(repeating: 0, count: g.outWidth)
                continue
            }
            row.update(repeating: 0, count: oxStart)
            let source = plane + iy * g.inWidth - g.padding + j
            switch g.stride {
            case 1: (row + oxStart).update(from: source + oxStart, count: oxEnd - oxStart)
            case 2: gatherEven(source + 2 * oxStart, count: oxEnd - oxStart, into: row + oxStart)
            default: for ox in oxStart..<oxEnd { row[ox] = source[ox * g.stride] }
            }
            (row + oxEnd).update(repeating: 0, count: g.outWidth - oxEnd)
        }
    }

    /// destination[k] = source[2k] for k < count, eight at a time (a strided scalar loop does
    /// not vectorise).
    @inline(__always)
    private static func gatherEven(_ source: UnsafePointer<Float>, count: Int, into destination: UnsafeMutablePointer<Float>) {
        var k = 0
        // The last full vector reads source[2k + 15]; stop while that is still inside 2*count - 1.
        while k + 8 <= count - 1 {
            let pairs = UnsafeRawPointer(source + 2 * k).loadUnaligned(as: SIMD16<Float>.self)
            UnsafeMutableRawPointer(destination + k).storeBytes(of: pairs.evenHalf, as: SIMD8<Float>.self)
            k += 8
        }
        while k < count {
            destination[k] = source[2 * k]
            k += 1
        }
    }
}

/// Sizes of one 2-D convolution (square stride and zero padding).
struct ConvGeometry {
    let inHeight: Int, inWidth: Int
    let kernelHeight: Int, kernelWidth: Int
    let stride: Int, padding: Int
    let outHeight: Int, outWidth: Int

    init(input: [Int], weight: [Int], stride: Int, padding: Int) {
        inHeight = input[2]; inWidth = input[3]
        kernelHeight = weight[2]; kernelWidth = weight[3]
        self.stride = stride; self.padding = padding
        outHeight = (inHeight + 2 * padding - kernelHeight) / stride + 1
        outWidth = (inWidth + 2 * padding - kernelWidth) / stride + 1
        precondition(inHeight + 2 * padding >= kernelHeight && inWidth + 2 * padding >= kernelWidth,
                     "conv2d: kernel \(kernelHeight)x\(kernelWidth) larger than padded input \(inHeight)x\(inWidth)")
    }

    /// The output columns (half-open) whose kernel column `tap` reads a real input pixel.
    func validColumns(tap: Int) -> (Int, Int) {
        Self.validOutputRange(tap: tap, inputSize: inWidth, outputSize: outWidth, stride: stride, padding: padding)
    }

    /// The output rows (half-open) whose kernel row `tap` reads a real input pixel.
    func validRows(tap: Int) -> (Int, Int) {
        Self.validOutputRange(tap: tap, inputSize: inHeight, outputSize: outHeight, stride: stride, padding: padding)
    }

    /// The output positions `o` along one axis, half-open, for which
    /// 0 <= o*stride - padding + tap < inputSize, clamped to 0..<outputSize.
    static func validOutputRange(tap: Int, inputSize: Int, outputSize: Int, stride: Int, padding: Int) -> (Int, Int) {
        let offset = tap - padding
        // Smallest o with o*stride + offset >= 0.
        let first = offset >= 0 ? 0 : (-offset + stride - 1) / stride
        // One past the largest o with o*stride + offset <= inputSize - 1.
        let limit = inputSize - 1 - offset
        let end = limit < 0 ? 0 : limit / stride + 1
        let start = min(first, outputSize)
        return (start, max(start, min(end, outputSize)))
    }
}
