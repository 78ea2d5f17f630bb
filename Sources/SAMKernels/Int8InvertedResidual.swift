import CInt8
import SAMTensor

extension Kernels {
    /// `invertedResidual` when both 1x1 convolutions are stored int8 and int8 products are on: the same
    /// bands of output rows and ring of three expanded rows, but channels-last inside. A pixel's channels
    /// are the row an int8 product quantizes, so the expansion writes its [W, E] rows straight into the
    /// ring, the depthwise convolution runs across channels, and the projection quantizes its rows where
    /// they are; only the narrow input and output maps (C and O channels) are transposed. Run channel-major
    /// (`int8ChannelProduct` per row), the E-channel maps were transposed twice per row.
    ///
    /// The products are `linear`'s int8 products on the pixels as tokens, bit for bit; the depthwise sums
    /// are float32 in its own order (so not the bits of the float32 block's depthwise row).
    static func int8InvertedResidual(_ x: FloatTensor, weights w: InvertedResidualWeights, expand: Int8Panels,
                                     project: Int8Panels, stride: Int, activation: Epilogue.Activation,
                                     epilogue: Epilogue, outShape: [Int]) -> FloatTensor {
        let (batch, inChannels, height, width) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3])
        let (expanded, outChannels, outHeight, outWidth) = (w.expanded, w.outChannels, outShape[2], outShape[3])
        // Tap-major filters, taps[t * E + c] = depthwise[c, t], so eight channels of a tap are one load.
        let taps = (0..<(9 * expanded)).map { w.depthwiseWeight.data[($0 % expanded) * 9 + $0 / expanded] }
        let bandsPerImage = min(outHeight, 2 * workerCount)
        let data = [Float](unsafeUninitializedCapacity: batch * outChannels * outHeight * outWidth) { outBuffer, initialized in
            x.data.withUnsafeBufferPointer { xBuffer in
            taps.withUnsafeBufferPointer { tapBuffer in
            withWeightPointers(w) { p in
            withResidual(epilogue) { residual in
                let out = outBuffer.baseAddress!
                let filters = DepthwiseFilters(taps: tapBuffer.baseAddress!, bias: p.depthwiseBias, channels: expanded)
                parallelFor(batch * bandsPerImage) { task in
                    let image = task / bandsPerImage, band = task % bandsPerImage
                    let scratch = Int8ChannelScratch()
                    scratch.reserve(pixels: width, inputs: max(inChannels, expanded), outputs: outChannels)
                    let input = xBuffer.baseAddress! + image * inChannels * height * width
                    // Rows [1 + W + 1, E] channels-last: a zero pixel either side, the depthwise padding.
                    ExpandedRowRing.eachOutputRow(ExpandedRowRing.band(band, of: bandsPerImage, outHeight: outHeight),
                                                  stride: stride, height: height, slotSize: (width + 2) * expanded,
                                                  depthwiseFloats: outWidth * expanded) { row, slot in
                        // x[:, row, :] as W rows of C channels, expanded into the ring's [W, E] row.
                        scratch.quantizePixels(input + row * width, xStride: height * width, channels: inChannels, pixels: width)
                        expand.product(codes: scratch.codes, scales: scratch.scales, rows: width, bias: p.expandBias,
                                       into: slot + expanded)
                        applyEpilogue(activation, slot + expanded, count: width * expanded, residual: nil)
                    } output: { oy, ring, depthwiseRow in
                        filters.outputRow(oy, ring: ring, stride: stride, outWidth: outWidth, height: height, into: depthwiseRow)
                        applyEpilogue(activation, depthwiseRow, count: outWidth * expanded, residual: nil)
                        sam_q8_quantize_rows(depthwiseRow, Int64(outWidth), Int64(expanded), Int64(expanded),
                                             scratch.codes, scratch.scales)
                        project.product(codes: scratch.codes, scales: scratch.scales, rows: outWidth,
                                        bias: p.projectBias, into: scratch.products)
                        // output[:, oy, :] = epilogue(the [W', O] products, transposed)
                        let plane = outHeight * outWidth, offset = image * outChannels * plane + oy * outWidth
                        storeChannelMajor(scratch.products, pixels: outWidth, channels: outChannels, into: out + offset,
                                          outStride: plane, activation: epilogue.activation, residual: residual.map { $0 + offset })
                    }
                }
            }
            }
            }
            }
            initialized = outBuffer.count
        }
        return FloatTensor(shape: outShape, data: data)
    }

    /// A 3x3 depthwise convolution (padding 1) across channels: eight channels of a pixel at a time.
    private struct DepthwiseFilters {
        let taps: UnsafePointer<Float>, bias: UnsafePointer<Float>, channels: Int

        /// Output row `oy` [W', E] from the ring (whose zero pixels and zero row stand for the padding).
        func outputRow(_ oy: Int, ring: ExpandedRowRing, stride: Int, outWidth: Int, height: Int, into out: UnsafeMutablePointer<Float>) {
            let top = oy * stride - 1
            let rows = (ring.paddedRow(top, height: height), ring.paddedRow(top + 1, height: height),
                        ring.paddedRow(top + 2, height: height))
            let e = channels
            var c = 0
            while c + 8 <= e {
                let (k0, k1, k2) = (load8(taps + c), load8(taps + e + c), load8(taps + 2 * e + c))
                let (k3, k4, k5) = (load8(taps + 3 * e + c), load8(taps + 4 * e + c), load8(taps + 5 * e + c))
                let (k6, k7, k8) = (load8(taps + 6 * e + c), load8(taps + 7 * e + c), load8(taps + 8 * e + c))
                let b = load8(bias + c)
                for ox in 0..<outWidth {
                    // The ring's pixel ox * stride + j is input column ox * stride - 1 + j.
                    let at = ox * stride * e + c
                    let (r0, r1, r2) = (rows.0 + at, rows.1 + at, rows.2 + at)
                    var sum = b
                    sum += k0 * load8(r0) + k1 * load8(r0 + e) + k2 * load8(r0 + 2 * e)
                    sum += k3 * load8(r1) + k4 * load8(r1 + e) + k5 * load8(r1 + 2 * e)
                    sum += k6 * load8(r2) + k7 * load8(r2 + e) + k8 * load8(r2 + 2 * e)
                    UnsafeMutableRawPointer(out + ox * e + c).storeBytes(of: sum, as: SIMD8<Float>.self)
                }
                c += 8
            }
            for channel in c..<e {
                for ox in 0..<outWidth {
                    let at = ox * stride * e + channel
                    let (r0, r1, r2) = (rows.0 + at, rows.1 + at, rows.2 + at), k = taps + channel
                    var sum = bias[channel]
                    sum += k[0] * r0[0] + k[e] * r0[e] + k[2 * e] * r0[2 * e]
                    sum += k[3 * e] * r1[0] + k[4 * e] * r1[e] + k[5 * e] * r1[2 * e]
                    sum += k[6 * e] * r2[0] + k[7 * e] * r2[e] + k[8 * e] * r2[2 * e]
                    out[ox * e + channel] = sum
                }
            }
        }

        @inline(__always) private func load8(_ p: UnsafePointer<Float>) -> SIMD8<Float> {
            UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Float>.self)
        }
    }
}
