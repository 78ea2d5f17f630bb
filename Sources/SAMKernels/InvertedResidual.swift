import SAMTensor

extension Kernels {
    /// The parameters of an inverted-residual block's three convolutions (BatchNorm folded in):
    /// a 1x1 expansion C -> E, a 3x3 depthwise convolution over E channels (padding 1), a 1x1
    /// projection E -> O.
    package struct InvertedResidualWeights: Sendable {
        /// [E, C] or [E, C, 1, 1], and [E]
        package let expandWeight: FloatTensor, expandBias: FloatTensor
        /// [E, 1, 3, 3], and [E]
        package let depthwiseWeight: FloatTensor, depthwiseBias: FloatTensor
        /// [O, E] or [O, E, 1, 1], and [O]
        package let projectWeight: FloatTensor, projectBias: FloatTensor

        /// The expansion's and the projection's codes ([E, C], [O, E], their weights' values) when they are
        /// stored int8: with int8 products on, when both have codes, the block runs on them
        /// (`int8InvertedResidual`).
        package let expandInt8: QuantizedWeight?, projectInt8: QuantizedWeight?

        package init(expandWeight: FloatTensor, expandBias: FloatTensor, depthwiseWeight: FloatTensor,
                    depthwiseBias: FloatTensor, projectWeight: FloatTensor, projectBias: FloatTensor,
                    expandInt8: QuantizedWeight? = nil, projectInt8: QuantizedWeight? = nil) {
            self.expandWeight = expandWeight
            self.expandBias = expandBias
            self.depthwiseWeight = depthwiseWeight
            self.depthwiseBias = depthwiseBias
            self.projectWeight = projectWeight
            self.projectBias = projectBias
            self.expandInt8 = expandInt8
            self.projectInt8 = projectInt8
        }

        var expanded: Int { expandWeight.shape[0] }
        var inChannels: Int { expandWeight.shape[1] }
        var outChannels: Int { projectWeight.shape[0] }
    }

    /// An inverted-residual block on NCHW x [B, C, H, W], computed row by row in cache:
    /// act(expand(x)) -> act(depthwise3x3(·, stride, pad 1)) -> project(·), then `epilogue`
    /// (residual, final activation). Returns [B, O, H', W'], H' = (H - 1) / stride + 1.
    ///
    /// The expanded maps are E/C times larger than x (4x in TinyViT's MBConv, 256 channels of
    /// 256x256) and as separate layers went to memory and back twice. Here each task owns a band
    /// of output rows and keeps only the three expanded rows the depthwise window needs (a ring,
    /// zero-padded left and right), so per output row: expand the new input rows (one product
    /// each), the depthwise row, one projection product into the output, the epilogue on it. The
    /// products are sgemm calls, or the panel product where `channelProductPanelsChosen`. The
    /// input rows above and below a band are expanded by both neighbouring tasks.
    ///
    /// `schedule` nil: by channel blocks where that runs and the map is small
    /// (`invertedResidualByChannelBlocks`), else by rows; given, that one (for A/B runs).
    package static func invertedResidual(_ x: FloatTensor, weights w: InvertedResidualWeights, stride: Int,
                                        activation: Epilogue.Activation, epilogue: Epilogue,
                                        schedule: InvertedResidualSchedule? = nil) -> FloatTensor {
        precondition(x.shape.count == 4 && x.shape[1] == w.inChannels,
                     "inverted residual: input \(x.shape) is not [B, \(w.inChannels), H, W]")
        let (batch, inChannels, height, width) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3])
        let expanded = w.expanded, outChannels = w.outChannels
        precondition(w.expandWeight.count == expanded * inChannels && w.expandBias.count == expanded
                     && w.depthwiseWeight.count == expanded * 9 && w.depthwiseBias.count == expanded
                     && w.projectWeight.count == outChannels * expanded && w.projectBias.count == outChannels,
                     "inverted residual: weights do not chain \(inChannels) -> \(expanded) -> \(outChannels)")
        precondition(stride >= 1 && height >= 1 && width >= 1, "inverted residual: bad stride \(stride) or size")
        let outHeight = (height - 1) / stride + 1, outWidth = (width - 1) / stride + 1
        let outShape = [batch, outChannels, outHeight, outWidth]
        epilogue.check(outputShape: outShape, "inverted residual")
        guard batch > 0 else { return FloatTensor(zeros: outShape) }
        let geometry = RowGeometry(inChannels: inChannels, expanded: expanded, height: height, width: width, stride: stride, outHeight: outHeight, outWidth: outWidth)
        // Both 1x1 convolutions in int8 products, when stored int8 and on (read here: the choice is task-local).
        if w.expandInt8 != nil && w.projectInt8 != nil, let expand = int8Panels(w.expandInt8, shape: [expanded, inChannels]),
           let project = int8Panels(w.projectInt8, shape: [outChannels, expanded]) {
            return int8InvertedResidual(x, weights: w, expand: expand, project: project, stride: stride, activation: activation,
                                        epilogue: epilogue, outShape: outShape)
        }
        switch schedule ?? InvertedResidualSchedule.chosen(height: height, width: width) {
        case .channelBlocks:
            return invertedResidualByChannelBlocks(x, weights: w, stride: stride, activation: activation, epilogue: epilogue,
                                                   outShape: outShape)
        default: break
        }
        let bandsPerImage = min(outHeight, 2 * workerCount)
        let onPanels = channelProductPanelsChosen
        let data = [Float](unsafeUninitializedCapacity: batch * outChannels * outHeight * outWidth) { outBuffer, initializedCount in
            withWeightPointers(w) { p in
            withResidual(epilogue) { residual in
            x.data.withUnsafeBufferPointer { xBuffer in
                let out = outBuffer.baseAddress!
                parallelFor(batch * bandsPerImage) { task in
                    let image = task / bandsPerImage, band = task % bandsPerImage
                    let input = xBuffer.baseAddress! + image * inChannels * height * width
                    let expand = ChannelProductTiles(onPanels: onPanels), project = ChannelProductTiles(onPanels: onPanels)
                    // Rows [E, 1 + W + 1]: a zero column either side, the depthwise padding.
                    ExpandedRowRing.eachOutputRow(ExpandedRowRing.band(band, of: bandsPerImage, outHeight: outHeight),
                                                  stride: stride, height: height, slotSize: expanded * (width + 2),
                                                  depthwiseFloats: expanded * outWidth) { row, slot in
                        expandRow(row, input: input, p, geometry, activation: activation, on: expand, into: slot)
                    } output: { oy, ring, depthwiseRow in
                        depthwiseOutputRow(oy, ring: ring, p, geometry, into: depthwiseRow)
                        applyEpilogue(activation, depthwiseRow, count: expanded * outWidth, residual: nil)
                        // output[:, oy, :] = epilogue(bias + project * depthwiseRow)
                        let plane = outHeight * outWidth, offset = image * outChannels * plane + oy * outWidth
                        project(weight: p.projectWeight, bias: p.projectBias, outChannels: outChannels,
                                inChannels: expanded, x: depthwiseRow, xStride: outWidth, pixels: outWidth,
                                into: out + offset, outStride: plane,
                                activation: epilogue.activation, residual: residual.map { $0 + offset })
                    }
                }
            }
            }
            }
            initializedCount = outBuffer.count
        }
        return FloatTensor(shape: outShape, data: data)
    }

    private struct RowGeometry {
        let inChannels: Int, expanded: Int
        let height: Int, width: Int, stride: Int, outHeight: Int, outWidth: Int
    }

    struct InvertedResidualPointers {
        let expandWeight, expandBias, depthwiseWeight, depthwiseBias, projectWeight, projectBias: UnsafePointer<Float>
    }

    static func withWeightPointers<R>(_ w: InvertedResidualWeights, _ body: (InvertedResidualPointers) -> R) -> R {
        w.expandWeight.data.withUnsafeBufferPointer { ew in w.expandBias.data.withUnsafeBufferPointer { eb in
            w.depthwiseWeight.data.withUnsafeBufferPointer { dw in w.depthwiseBias.data.withUnsafeBufferPointer { db in
                w.projectWeight.data.withUnsafeBufferPointer { pw in w.projectBias.data.withUnsafeBufferPointer { pb in
                    body(InvertedResidualPointers(expandWeight: ew.baseAddress!, expandBias: eb.baseAddress!,
                                                  depthwiseWeight: dw.baseAddress!, depthwiseBias: db.baseAddress!,
                                                  projectWeight: pw.baseAddress!, projectBias: pb.baseAddress!))
                } }
            } }
        } }
    }

    /// The int8 products' panels of a 1x1 convolution's codes ([out, in]), when int8 products are on and
    /// it has codes: packed once per call, as `linear` packs a weight for an image's rows.
    private static func int8Panels(_ codes: QuantizedWeight?, shape: [Int]) -> Int8Panels? {
        guard let codes = int8ProductCodes(codes), codes.shape == shape else { return nil }
        return Int8Panels(codes)
    }

    /// act(bias + expandWeight * x[:, row, :]) [E, W] into the slot's inner columns.
    private static func expandRow(_ row: Int, input: UnsafePointer<Float>, _ p: InvertedResidualPointers, _ g: RowGeometry,
                                  activation: Epilogue.Activation, on product: ChannelProductTiles,
                                  into slot: UnsafeMutablePointer<Float>) {
        product(weight: p.expandWeight, bias: p.expandBias, outChannels: g.expanded, inChannels: g.inChannels,
                x: input + row * g.width, xStride: g.height * g.width, pixels: g.width,
                into: slot + 1, outStride: g.width + 2, activation: activation, residual: nil)
    }

    /// The depthwise 3x3 convolution's output row `oy` [E, W'] from the ring (whose zero
    /// columns and zero row stand for the padding), with `depthwise3x3Row` as `depthwise3x3Plane` uses it.
    private static func depthwiseOutputRow(_ oy: Int, ring: ExpandedRowRing, _ p: InvertedResidualPointers, _ g: RowGeometry,
                                           into out: UnsafeMutablePointer<Float>) {
        let top = oy * g.stride - 1
        for channel in 0..<g.expanded {
            let f = p.depthwiseWeight + channel * 9
            let k = (f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8])
            let at = channel * (g.width + 2)
            let rows = (ring.paddedRow(top, height: g.height) + at, ring.paddedRow(top + 1, height: g.height) + at,
                        ring.paddedRow(top + 2, height: g.height) + at)
            // The ring's pad columns make every output column an interior one (padded column ox*stride).
            depthwise3x3Row(rows, out + channel * g.outWidth, columns: 0..<g.outWidth, stride: g.stride, padding: 0,
                            k: k, bias: p.depthwiseBias[channel])
        }
    }
}
