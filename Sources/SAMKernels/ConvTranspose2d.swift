import SAMBLAS
import SAMTensor

extension Kernels {
    /// PyTorch nn.ConvTranspose2d with zero padding: x [N, in, H, W], weight [in, out, kh, kw],
    /// bias [out] or nil. Output [N, out, (H-1)*stride + kh, (W-1)*stride + kw].
    ///
    /// One sgemm per image computes every (output channel, tap) contribution of every input
    /// pixel, contributions [out*kh*kw, H*W] = weightᵀ * x, which are then scattered into the
    /// bias-seeded output. When kernel == stride (SAM's 2x2 stride-2 upscaling) every output
    /// pixel receives exactly one contribution; when kernels overlap, contributions are summed
    /// (col2im), so one path serves both. `epilogue` runs on each output plane once it is complete.
    package static func convTranspose2d(_ x: FloatTensor, weight: FloatTensor, bias: FloatTensor?, stride: Int,
                                       epilogue: Epilogue = .none) -> FloatTensor {
        precondition(x.shape.count == 4, "convTranspose2d: input must be NCHW, got \(x.shape)")
        precondition(weight.shape.count == 4 && weight.shape[0] == x.shape[1],
                     "convTranspose2d: weight \(weight.shape) must be [in, out, kh, kw] with in = \(x.shape[1])")
        precondition(stride >= 1, "convTranspose2d: stride must be positive")
        let batch = x.shape[0], inChannels = x.shape[1], height = x.shape[2], width = x.shape[3]
        let outChannels = weight.shape[1], kernelHeight = weight.shape[2], kernelWidth = weight.shape[3]
        if let bias { precondition(bias.count == outChannels, "convTranspose2d: bias \(bias.shape) for \(outChannels) outputs") }
        let outHeight = (height - 1) * stride + kernelHeight, outWidth = (width - 1) * stride + kernelWidth
        // Contributions are added onto the bias.
        var output = biasSeededNCHW([batch, outChannels, outHeight, outWidth], bias: bias)
        let pixels = height * width, taps = kernelHeight * kernelWidth
        guard output.count > 0, x.count > 0 else {
            applyEpilogue(epilogue, to: &output)
            return output
        }

        // Written in full by the sgemm (beta = 0), so no initial fill.
        let contribution = UnsafeMutablePointer<Float>.allocate(capacity: outChannels * taps * pixels)
        defer { contribution.deallocate() }
        epilogue.check(outputShape: output.shape, "convTranspose2d")
        withResidual(epilogue) { residual in
        x.data.withUnsafeBufferPointer { xBuffer in
            weight.data.withUnsafeBufferPointer { weightBuffer in
                output.data.withUnsafeMutableBufferPointer { outBuffer in
                    for n in 0..<batch {
                        // Weight is [in, out*kh*kw] row-major, so transA gives [out*kh*kw, in].
                        gemm(transA: true, transB: false, m: outChannels * taps, n: pixels, k: inChannels, alpha: 1,
                                   a: weightBuffer.baseAddress!, lda: outChannels * taps,
                                   b: xBuffer.baseAddress! + n * inChannels * pixels, ldb: pixels,
                                   beta: 0, c: contribution, ldc: pixels)
                        let image = outBuffer.baseAddress! + n * outChannels * outHeight * outWidth
                        // Each task owns whole output channels, so overlapping taps of one
                        // channel are always summed by the same thread.
                        parallelFor(outChannels) { oc in
                            let plane = image + oc * outHeight * outWidth
                            for i in 0..<kernelHeight {
                                for j in 0..<kernelWidth {
                                    let source = contribution + ((oc * kernelHeight + i) * kernelWidth + j) * pixels
                                    for y in 0..<height {
                                        let outRow = plane + (y * stride + i) * outWidth + j
                                        let sourceRow = source + y * width
                                        for xIndex in 0..<width { outRow[xIndex * stride] += sourceRow[xIndex] }
                                    }
                                }
                            }
                            let planeOffset = (n * outChannels + oc) * outHeight * outWidth
                            applyEpilogue(epilogue.activation, plane, count: outHeight * outWidth,
                                          residual: residual.map { $0 + planeOffset })
                        }
                    }
                }
            }
        }
        }
        return output
    }
}
