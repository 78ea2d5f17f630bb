import SAMBLAS
import SAMTensor

extension Kernels {
    /// How `invertedResidual` walks a block.
    package enum InvertedResidualSchedule: Sendable {
        /// Bands of output rows, three expanded rows in cache at a time: one product per row against the
        /// whole weight. Wins on large maps (TinyViT's 256x256), whose expanded map would be tens of MB.
        case rows
        /// Blocks of expanded channels over the whole map (`invertedResidualByChannelBlocks`): wins on
        /// small maps, where a row is too few pixels to pay for a product against the whole weight.
        case channelBlocks

        /// Channel blocks on maps of up to 64x64 pixels. `sambench inverted-residual --runs 20` (2 threads,
        /// Zen 4, the ways alternated, medians, rows / channel blocks): EfficientViT-SAM L0's 512 -> 3072
        /// -> 512 over 16x16 14.7 / 8.7 ms, 256 -> 6144 -> 512 at stride 2 over 32x32 37.5 / 26.2, 256 ->
        /// 1024 -> 256 over 32x32 7.6 / 6.8, 128 -> 2048 -> 256 at stride 2 over 64x64 21.4 / 20.2; XL0's
        /// 256 -> 4096 -> 512 at stride 2 over 64x64 86.5 / 70.1; TinyViT's PatchMerging 160 -> 320 -> 320
        /// over 64x64 7.9 / 7.3 (about even over several runs, either side ahead), over 128x128 at stride 2
        /// 5.8 / 6.4, its MBConv over 256x256 34.8 / 45.0. Held to AVX2 (`SAM_CPU_CAP=avx2`, the expansion
        /// on OpenBLAS): L0's 16x16 14.0 / 9.0, 32x32 at stride 2 38.8 / 29.4, 64x64 at stride 2 23.4 /
        /// 22.3; XL0's 86.0 / 76.6; PatchMerging over 64x64 8.4 / 8.0, over 128x128 6.3 / 7.8.
        static func chosen(height: Int, width: Int) -> Self { height * width <= 4096 ? .channelBlocks : .rows }
    }

    /// `invertedResidual` in two phases over whole maps: each task takes blocks of expanded channels and
    /// makes them complete (the 1x1 expansion of the block over every pixel, as the panel product
    /// against the image packed once, or one sgemm where `linear` would take the BLAS for as many
    /// inputs, which packs the image on every call: blocks of at least 48 channels there; its bias and
    /// activation, copied into a zero-padded plane per channel, then the depthwise rows and their activation) into the shared
    /// depthwise map [E, H'W']; then the projection, one product split over the workers, and the
    /// epilogue. The depthwise taps add in the row kernel's order over the same zero padding.
    static func invertedResidualByChannelBlocks(_ x: FloatTensor, weights w: InvertedResidualWeights, stride: Int,
                                                activation: Epilogue.Activation, epilogue: Epilogue,
                                                outShape: [Int]) -> FloatTensor {
        let (batch, inChannels, height, width) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3])
        let expanded = w.expanded, outChannels = w.outChannels
        let outHeight = outShape[2], outWidth = outShape[3]
        let pixels = height * width, outPixels = outHeight * outWidth
        let paddedWidth = width + 2, paddedPlane = (height + 2) * paddedWidth
        // Whole twelve-row blocks of the panel product, about 128 KB of expansion, a few blocks per worker;
        // on the BLAS, blocks large enough that its copy of the image per call is a small part of the work.
        let panels = float32LinearKernel == .panels && panelProductPays(inputs: inChannels)
        let blockChannels = max(panels ? 12 : 48, min(96, 32_768 / pixels / 12 * 12, expanded / (4 * workerCount) / 12 * 12))
        let blocks = (expanded + blockChannels - 1) / blockChannels
        let depthwise = UnsafeMutablePointer<Float>.allocate(capacity: expanded * outPixels)
        defer { depthwise.deallocate() }
        let data = [Float](unsafeUninitializedCapacity: batch * outChannels * outPixels) { outBuffer, initializedCount in
            withWeightPointers(w) { p in
            withResidual(epilogue) { residual in
            x.data.withUnsafeBufferPointer { xBuffer in
                for image in 0..<batch {
                    let input = xBuffer.baseAddress! + image * inChannels * pixels
                    let packed = panels
                        ? ProductPanels(features: pixels, inputs: inChannels, source: input, featureStride: 1, inputStride: pixels)
                        : nil
                    parallelForChunks(blocks) { range in
                        let expandedBlock = UnsafeMutablePointer<Float>.allocate(capacity: blockChannels * pixels)
                        defer { expandedBlock.deallocate() }
                        // Planes [channel, 1 + H + 1, 1 + W + 1]: the zero border is the depthwise padding.
                        let planes = UnsafeMutablePointer<Float>.allocate(capacity: blockChannels * paddedPlane)
                        defer { planes.deallocate() }
                        planes.initialize(repeating: 0, count: blockChannels * paddedPlane)
                        for block in range {
                            let first = block * blockChannels, channels = min(blockChannels, expanded - first)
                            if let packed {
                                packed.product(x: p.expandWeight + first * inChannels, xStride: inChannels, rows: channels,
                                               bias: nil, into: expandedBlock, outStride: pixels)
                            } else {
                                BLAS.sgemm(transA: false, transB: false, m: channels, n: pixels, k: inChannels, alpha: 1,
                                           a: p.expandWeight + first * inChannels, lda: inChannels, b: input, ldb: pixels,
                                           beta: 0, c: expandedBlock, ldc: pixels)
                            }
                            for channel in 0..<channels {
                                let plane = planes + channel * paddedPlane, source = expandedBlock + channel * pixels
                                addBias(p.expandBias[first + channel], source, count: pixels)
                                applyEpilogue(activation, source, count: pixels, residual: nil)
                                for row in 0..<height {
                                    (plane + (row + 1) * paddedWidth + 1).update(from: source + row * width, count: width)
                                }
                                depthwisePlane(first + channel, padded: plane, p, stride: stride, paddedWidth: paddedWidth,
                                               outHeight: outHeight, outWidth: outWidth,
                                               into: depthwise + (first + channel) * outPixels)
                            }
                            applyEpilogue(activation, depthwise + first * outPixels, count: channels * outPixels, residual: nil)
                        }
                    }
                    // out = epilogue(bias + project * depthwise): one product cut into a block per worker.
                    let out = outBuffer.baseAddress! + image * outChannels * outPixels
                    for channel in 0..<outChannels {
                        (out + channel * outPixels).initialize(repeating: p.projectBias[channel], count: outPixels)
                    }
                    gemm(transA: false, transB: false, m: outChannels, n: outPixels, k: expanded, alpha: 1,
                         a: p.projectWeight, lda: expanded, b: depthwise, ldb: outPixels, beta: 1, c: out, ldc: outPixels)
                    if !epilogue.isIdentity {
                        let imageResidual = residual.map { $0 + image * outChannels * outPixels }
                        parallelRanges(outChannels * outPixels) { range in
                            applyEpilogue(epilogue.activation, out + range.lowerBound, count: range.count,
                                          residual: imageResidual.map { $0 + range.lowerBound })
                        }
                    }
                }
            }
            }
            }
            initializedCount = outBuffer.count
        }
        return FloatTensor(shape: outShape, data: data)
    }

    /// One channel's depthwise 3x3 output [H', W'] from its zero-padded plane, row by row as the row
    /// kernel makes it (`depthwise3x3Row` with the padding already in the plane).
    private static func depthwisePlane(_ channel: Int, padded plane: UnsafePointer<Float>, _ p: InvertedResidualPointers,
                                       stride: Int, paddedWidth: Int, outHeight: Int, outWidth: Int,
                                       into out: UnsafeMutablePointer<Float>) {
        let f = p.depthwiseWeight + channel * 9
        let k = (f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8])
        for oy in 0..<outHeight {
            let top = plane + oy * stride * paddedWidth
            depthwise3x3Row((top, top + paddedWidth, top + 2 * paddedWidth), out + oy * outWidth, columns: 0..<outWidth,
                            stride: stride, padding: 0, k: k, bias: p.depthwiseBias[channel])
        }
    }
}
