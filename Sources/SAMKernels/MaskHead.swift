import CVectorMath
import SAMBLAS
import SAMTensor

extension Kernels {
    /// SAM's output upscaling (ConvTranspose2d 2x2/2 → LayerNorm2d → GELU → ConvTranspose2d
    /// 2x2/2 → GELU) and hypernetwork product, prepared for `maskHead`: each transposed
    /// convolution's weight [in, out, 2, 2] is repacked to [in, 4*out] with its columns ordered
    /// (tap, channel), so one product gives every tap of an input pixel as contiguous channel rows.
    /// All parameters sit in one array, in the order they are used (see `Offsets`).
    package struct MaskHeadWeights: Sendable {
        package let inChannels: Int, middleChannels: Int, outChannels: Int
        let normEps: Float
        /// first (packed) | first bias | norm weight | norm bias | second (packed) | second bias
        let parameters: [Float]

        /// Where each part starts in `parameters`.
        struct Offsets {
            let first = 0, firstBias: Int, normWeight: Int, normBias: Int, second: Int, secondBias: Int
            init(inChannels c0: Int, middleChannels c1: Int, outChannels c2: Int) {
                firstBias = 4 * c0 * c1
                normWeight = firstBias + c1
                normBias = normWeight + c1
                second = normBias + c1
                secondBias = second + 4 * c1 * c2
            }
        }

        var offsets: Offsets { Offsets(inChannels: inChannels, middleChannels: middleChannels, outChannels: outChannels) }

        /// firstWeight [C, C1, 2, 2], normWeight/normBias [C1], secondWeight [C1, C2, 2, 2].
        package init(firstWeight: FloatTensor, firstBias: FloatTensor, normWeight: FloatTensor, normBias: FloatTensor,
                    normEps: Float, secondWeight: FloatTensor, secondBias: FloatTensor) {
            precondition(firstWeight.shape.count == 4 && firstWeight.shape[2] == 2 && firstWeight.shape[3] == 2
                         && secondWeight.shape.count == 4 && secondWeight.shape[2] == 2 && secondWeight.shape[3] == 2
                         && secondWeight.shape[0] == firstWeight.shape[1],
                         "maskHead: weights \(firstWeight.shape), \(secondWeight.shape) are not two chained 2x2 transposed convolutions")
            inChannels = firstWeight.shape[0]
            middleChannels = firstWeight.shape[1]
            outChannels = secondWeight.shape[1]
            precondition(firstBias.count == middleChannels && normWeight.count == middleChannels
                         && normBias.count == middleChannels && secondBias.count == outChannels,
                         "maskHead: bias or norm sizes do not match the weights")
            parameters = Self.tapMajor(firstWeight) + firstBias.data + normWeight.data + normBias.data
                + Self.tapMajor(secondWeight) + secondBias.data
            self.normEps = normEps
        }

        /// [in, out, 2, 2] -> [in, 4 * out], column (i*2 + j) * out + o.
        private static func tapMajor(_ weight: FloatTensor) -> [Float] {
            let (inputs, outputs) = (weight.shape[0], weight.shape[1])
            var packed = [Float](repeating: 0, count: weight.count)
            for c in 0..<inputs {
                for o in 0..<outputs {
                    for tap in 0..<4 { packed[c * 4 * outputs + tap * outputs + o] = weight.data[(c * outputs + o) * 4 + tap] }
                }
            }
            return packed
        }
    }

    /// masks [1, M, 4h, 4w] = hypernetwork [M, C2] · upscaled, where upscaled is SAM's output
    /// upscaling of the image tokens [1, h*w, C], computed channels-last one band of input rows
    /// at a time: the transposed convolutions are products whose rows scatter to their 2x2
    /// output pixels, the LayerNorm is over each pixel's contiguous channels, and the band's
    /// masks are made before the next band, so the [C2, 4h, 4w] map (8 MB for MobileSAM) is
    /// never written out. The same arithmetic as the NCHW modules, in another order. With AVX-512 the
    /// last GELU and the hypernetwork product run on the second product's taps directly
    /// (`sam_mask_head_tail_avx512`: sixteen output pixels at a time, no scatter, no BLAS call).
    /// ref: mask_decoder.py MaskDecoder.predict_masks — upscaled_embedding = self.output_upscaling(src);
    /// masks = (hyper_in @ upscaled_embedding.view(b, c, h * w)).view(b, -1, h, w)
    package static func maskHead(tokens: FloatTensor, height: Int, width: Int, weights w: MaskHeadWeights,
                                hypernetwork: FloatTensor) -> FloatTensor {
        let (c0, c1, c2) = (w.inChannels, w.middleChannels, w.outChannels)
        precondition(tokens.shape == [1, height * width, c0], "maskHead: tokens \(tokens.shape) are not [1, \(height)*\(width), \(c0)]")
        precondition(hypernetwork.shape.count == 2 && hypernetwork.shape[1] == c2,
                     "maskHead: hypernetwork \(hypernetwork.shape) is not [M, \(c2)]")
        let maskCount = hypernetwork.shape[0]
        let outWidth = 4 * width, plane = 16 * height * width
        guard maskCount > 0, plane > 0 else { return FloatTensor(zeros: [1, maskCount, 4 * height, outWidth]) }
        // Per band: the input pixels' products, then the middle map's (a buffer reused), the
        // middle map [2 rows, 2w, C1] and, unless the tail is fused, the upscaled map [4 rows, 4w, C2].
        let bandRows = 1
        let bands = (height + bandRows - 1) / bandRows
        let productCount = max(bandRows * width * 4 * c1, 4 * bandRows * width * 4 * c2)
        // The scatter, GELU and hypernetwork product in one pass over the taps, where the C kernel
        // takes the shape: no upscaled map, no BLAS call per band.
        let fusedTail = wideVectorsAvailable && c2 % 16 == 0 && (2 * width) % 8 == 0
            && maskCount <= Int(SAM_MASK_HEAD_MAX_MASKS)
        let middleCount = 4 * bandRows * width * c1, upscaledCount = fusedTail ? 0 : 16 * bandRows * width * c2
        let data = [Float](unsafeUninitializedCapacity: maskCount * plane) { masksBuffer, initializedCount in
            tokens.data.withUnsafeBufferPointer { tokensBuffer in
            hypernetwork.data.withUnsafeBufferPointer { hyperBuffer in
            w.parameters.withUnsafeBufferPointer { parameters in
                let masks = masksBuffer.baseAddress!, at = w.offsets, base = parameters.baseAddress!
                let first = base + at.first, firstBias = base + at.firstBias, gamma = base + at.normWeight
                let beta = base + at.normBias, second = base + at.second, secondBias = base + at.secondBias
                let firstProduct = TapProduct(weight: first, inputs: c0, columns: 4 * c1)
                let secondProduct = TapProduct(weight: second, inputs: c1, columns: 4 * c2)
                parallelForChunks(bands) { bandRange in
                    let products = UnsafeMutablePointer<Float>.allocate(capacity: productCount)
                    let middle = UnsafeMutablePointer<Float>.allocate(capacity: middleCount)
                    let upscaled = UnsafeMutablePointer<Float>.allocate(capacity: upscaledCount)
                    defer { products.deallocate(); middle.deallocate(); upscaled.deallocate() }
                    for band in bandRange {
                        let firstRow = band * bandRows, rows = min(bandRows, height - firstRow)
                        let inputPixels = rows * width, middlePixels = 4 * inputPixels, outPixels = 16 * inputPixels
                        // ref: output_upscaling[0] ConvTranspose2d: every tap of every input pixel
                        firstProduct(tokensBuffer.baseAddress! + firstRow * width * c0, rows: inputPixels, into: products)
                        scatterTaps(products, rows: rows, width: width, channels: c1, bias: firstBias, into: middle)
                        // ref: output_upscaling[1] LayerNorm2d (over each pixel's channels), [2] GELU
                        for p in 0..<middlePixels {
                            layerNormRow(middle + p * c1, width: c1, gamma: gamma, beta: beta,
                                         eps: w.normEps, into: middle + p * c1)
                        }
                        geluInPlace(middle, count: middlePixels * c1)
                        // ref: output_upscaling[3] ConvTranspose2d, [4] GELU
                        secondProduct(middle, rows: middlePixels, into: products)
                        if fusedTail {
                            // ref: output_upscaling[4] GELU; predict_masks — hyper_in @ upscaled_embedding
                            sam_mask_head_tail_avx512(products, Int64(2 * rows), Int64(2 * width), Int64(c2), secondBias,
                                                      hyperBuffer.baseAddress!, Int64(maskCount),
                                                      masks + 4 * firstRow * outWidth, Int64(outWidth), Int64(plane))
                            continue
                        }
                        scatterTaps(products, rows: 2 * rows, width: 2 * width, channels: c2, bias: secondBias,
                                    into: upscaled)
                        geluInPlace(upscaled, count: outPixels * c2)
                        // ref: predict_masks — hyper_in @ upscaled_embedding: this band's rows of every mask
                        BLAS.sgemm(transA: false, transB: true, m: maskCount, n: outPixels, k: c2, alpha: 1,
                                   a: hyperBuffer.baseAddress!, lda: c2, b: upscaled, ldb: c2,
                                   beta: 0, c: masks + 4 * firstRow * outWidth, ldc: plane)
                    }
                }
            }
            }
            }
            initializedCount = maskCount * plane
        }
        return FloatTensor(shape: [1, maskCount, 4 * height, outWidth], data: data)
    }

    /// One of the mask head's products, pixels [rows, inputs] · weight [inputs, columns] (its taps
    /// side by side): on the panel product where `linear` would use it, the weight packed once per call
    /// rather than by the BLAS for every band of 64 pixels (MobileSAM's head on Zen 4, alternating
    /// runs in one process: 6.7 ms against 7.3); otherwise sgemm.
    private struct TapProduct {
        let weight: UnsafePointer<Float>, inputs: Int, columns: Int
        let panels: ProductPanels?

        init(weight: UnsafePointer<Float>, inputs: Int, columns: Int) {
            (self.weight, self.inputs, self.columns) = (weight, inputs, columns)
            panels = float32LinearKernel == .panels && panelProductPays(inputs: inputs)
                ? ProductPanels(features: columns, inputs: inputs, source: weight, featureStride: 1, inputStride: columns)
                : nil
        }

        func callAsFunction(_ pixels: UnsafePointer<Float>, rows: Int, into out: UnsafeMutablePointer<Float>) {
            if let panels {
                panels.product(x: pixels, xStride: inputs, rows: rows, bias: nil, into: out, outStride: columns)
            } else {
                BLAS.sgemm(transA: false, transB: false, m: rows, n: columns, k: inputs, alpha: 1, a: pixels, lda: inputs,
                           b: weight, ldb: columns, beta: 0, c: out, ldc: columns)
            }
        }
    }

    /// A 2x2 stride-2 transposed convolution's scatter, channels-last: products [rows*width,
    /// 4*channels] (taps (i, j) in order, as MaskHeadWeights packs them) to the output pixels
    /// (2y+i, 2x+j) of [2*rows, 2*width, channels], adding the bias.
    @inline(__always)
    private static func scatterTaps(_ products: UnsafePointer<Float>, rows: Int, width: Int, channels: Int,
                                    bias: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>) {
        let vectorEnd = channels & ~7
        for y in 0..<rows {
            for x in 0..<width {
                let source = products + (y * width + x) * 4 * channels
                for tap in 0..<4 {
                    let (i, j) = (tap / 2, tap % 2)
                    let from = source + tap * channels, to = output + ((2 * y + i) * 2 * width + 2 * x + j) * channels
                    var c = 0
                    while c < vectorEnd { to.store8(from.load8(at: c) + bias.load8(at: c), at: c); c += 8 }
                    while c < channels { to[c] = from[c] + bias[c]; c += 1 }
                }
            }
        }
    }
}
