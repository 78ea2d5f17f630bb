import CInt8
import SAMTensor

extension Kernels {
    /// Scratch rows for `int8ChannelProduct`, one per worker task, grown to the largest call it serves.
    final class Int8ChannelScratch {
        private(set) var pixelRows: UnsafeMutablePointer<Float>, codes: UnsafeMutablePointer<UInt8>
        private(set) var scales: UnsafeMutablePointer<Float>, products: UnsafeMutablePointer<Float>
        private var capacity = (pixels: 0, inputs: 0, outputs: 0)

        init() {
            (pixelRows, codes, scales, products) = (.allocate(capacity: 1), .allocate(capacity: 1), .allocate(capacity: 1),
                                                   .allocate(capacity: 1))
        }

        /// Room for `pixels` rows of `inputs` values (and their codes) and of `outputs` products.
        func reserve(pixels: Int, inputs: Int, outputs: Int) {
            guard pixels > capacity.pixels || inputs > capacity.inputs || outputs > capacity.outputs else { return }
            capacity = (max(pixels, capacity.pixels), max(inputs, capacity.inputs), max(outputs, capacity.outputs))
            release()
            pixelRows = .allocate(capacity: capacity.pixels * capacity.inputs)
            codes = .allocate(capacity: capacity.pixels * Int(sam_q8_row_bytes(Int64(capacity.inputs))))
            scales = .allocate(capacity: capacity.pixels)
            products = .allocate(capacity: capacity.pixels * capacity.outputs)
        }

        private func release() {
            pixelRows.deallocate()
            codes.deallocate()
            scales.deallocate()
            products.deallocate()
        }

        deinit { release() }

        /// Channel-major x [channels, pixels] (rows `xStride` apart) as `pixels` rows of `channels`,
        /// each quantized with its own scale into `codes` and `scales`, as `linear`'s int8 products
        /// quantize tokens.
        func quantizePixels(_ x: UnsafePointer<Float>, xStride: Int, channels: Int, pixels: Int) {
            transpose(x, stride: xStride, rows: channels, columns: pixels, into: pixelRows, stride: channels)
            sam_q8_quantize_rows(pixelRows, Int64(pixels), Int64(channels), Int64(channels), codes, scales)
        }
    }

    /// `products` [pixels, channels] written channel-major into `out` (rows `outStride` apart), then the
    /// epilogue on each channel's row: `residual` (same layout) added, then `activation`.
    static func storeChannelMajor(_ products: UnsafePointer<Float>, pixels: Int, channels: Int,
                                  into out: UnsafeMutablePointer<Float>, outStride: Int,
                                  activation: Epilogue.Activation, residual: UnsafePointer<Float>?) {
        transpose(products, stride: channels, rows: pixels, columns: channels, into: out, stride: outStride)
        guard activation != .none || residual != nil else { return }
        for channel in 0..<channels {
            applyEpilogue(activation, out + channel * outStride, count: pixels, residual: residual.map { $0 + channel * outStride })
        }
    }

    /// A 1x1 convolution on a block of pixels in int8 products (`int8Products`, a weight stored int8):
    /// out[o, p] = epilogue(bias[o] + the product), channel-major like `channelProduct`. Each pixel's
    /// channels are gathered into a row and quantized with its own scale (dynamic, symmetric, as
    /// `linear`'s int8 products quantize each token), multiplied by the codes in exact integer sums, scaled
    /// back with the bias seeding each, and written back channel-major: the same bits as `linear`'s int8
    /// products on the pixels as tokens. Rows of `x` are `xStride` apart, rows of `out` (and of
    /// `residual`) `outStride` apart. Single-threaded.
    static func int8ChannelProduct(_ panels: Int8Panels, bias: UnsafePointer<Float>?, x: UnsafePointer<Float>, xStride: Int,
                                   pixels: Int, into out: UnsafeMutablePointer<Float>, outStride: Int,
                                   activation: Epilogue.Activation, residual: UnsafePointer<Float>?,
                                   scratch: Int8ChannelScratch) {
        let (outChannels, inChannels) = (panels.features, panels.inputs)
        scratch.reserve(pixels: pixels, inputs: inChannels, outputs: outChannels)
        scratch.quantizePixels(x, xStride: xStride, channels: inChannels, pixels: pixels)
        panels.product(codes: scratch.codes, scales: scratch.scales, rows: pixels, bias: bias, into: scratch.products)
        storeChannelMajor(scratch.products, pixels: pixels, channels: outChannels, into: out, outStride: outStride,
                          activation: activation, residual: residual)
    }

    /// A pointwise convolution on NCHW x [B, C, H, W] whose weight is stored int8 ([O, C] codes and row
    /// scales), in int8 products, then `epilogue`: `int8ChannelProduct` on tiles of pixels, in parallel.
    /// Nil when int8 products are off or the weight's rows are too long for exact sums, as `linear`'s.
    package static func int8PointwiseConv(_ x: FloatTensor, weight: QuantizedWeight, bias: FloatTensor?,
                                          epilogue: Epilogue = .none) -> FloatTensor? {
        guard let weight = int8ProductCodes(weight) else { return nil }
        let (outChannels, inChannels) = (weight.shape[0], weight.shape[1])
        precondition(x.shape.count == 4 && x.shape[1] == inChannels && (bias?.count ?? outChannels) == outChannels,
                     "int8 pointwise convolution: input \(x.shape), weight \(weight.shape), bias \(bias?.shape ?? [])")
        let (batch, pixels) = (x.shape[0], x.shape[2] * x.shape[3])
        let outShape = [batch, outChannels, x.shape[2], x.shape[3]]
        epilogue.check(outputShape: outShape, "int8 pointwise convolution")
        let panels = Int8Panels(weight)
        // Tiles of 256 pixels (the inverted residual's rows), at least two per worker when there are pixels enough.
        let tilePixels = max(16, min(256, (pixels + 2 * workerCount - 1) / (2 * workerCount)))
        let tilesPerImage = (pixels + tilePixels - 1) / tilePixels
        let data = [Float](unsafeUninitializedCapacity: batch * outChannels * pixels) { outBuffer, initialized in
            x.data.withUnsafeBufferPointer { xBuffer in
                (bias?.data ?? []).withUnsafeBufferPointer { biasBuffer in
                    withResidual(epilogue) { residual in
                        let out = outBuffer.baseAddress!
                        parallelForChunks(batch * tilesPerImage) { tiles in
                            let scratch = Int8ChannelScratch()
                            for tile in tiles {
                                let image = tile / tilesPerImage, first = tile % tilesPerImage * tilePixels
                                let offset = image * outChannels * pixels + first
                                int8ChannelProduct(panels, bias: bias == nil ? nil : biasBuffer.baseAddress,
                                                   x: xBuffer.baseAddress! + image * inChannels * pixels + first, xStride: pixels,
                                                   pixels: min(tilePixels, pixels - first), into: out + offset, outStride: pixels,
                                                   activation: epilogue.activation, residual: residual.map { $0 + offset },
                                                   scratch: scratch)
                            }
                        }
                    }
                }
            }
            initialized = outBuffer.count
        }
        return FloatTensor(shape: outShape, data: data)
    }
}
