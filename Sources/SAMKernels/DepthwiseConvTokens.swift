import SAMTensor

extension Kernels {
    /// Depthwise convolution, stride 1, zero padding, on a channels-last map: tokens [B, H*W, C]
    /// in and out, weight [C, 1, kh, kw] (PyTorch's depthwise layout), bias [C] or nil, then
    /// `epilogue`. The same numbers as `conv2d(tokensToNCHW(x), groups: C)` transposed back, but
    /// with no transposes: each tap adds a weighted copy of a contiguous run of input pixels
    /// (all their channels) to a run of output pixels, vectorised over channels.
    package static func depthwiseConvTokens(_ x: FloatTensor, height: Int, width: Int, weight: FloatTensor,
                                           bias: FloatTensor?, padding: Int, epilogue: Epilogue = .none) -> FloatTensor {
        precondition(x.shape.count == 3 && x.shape[1] == height * width,
                     "depthwiseConvTokens: \(x.shape) is not [B, \(height)*\(width), C]")
        let batch = x.shape[0], channels = x.shape[2]
        precondition(weight.shape.count == 4 && weight.shape[0] == channels && weight.shape[1] == 1,
                     "depthwiseConvTokens: weight \(weight.shape) is not [\(channels), 1, kh, kw]")
        let kernelHeight = weight.shape[2], kernelWidth = weight.shape[3]
        precondition(2 * padding == kernelHeight - 1 && 2 * padding == kernelWidth - 1,
                     "depthwiseConvTokens: padding \(padding) must keep the \(height)x\(width) map size")
        if let bias { precondition(bias.count == channels, "depthwiseConvTokens: bias \(bias.shape) for \(channels) channels") }
        epilogue.check(outputShape: x.shape, "depthwiseConvTokens")
        let count = x.count
        guard count > 0 else { return FloatTensor(zeros: x.shape) }

        // Taps-major weights [kh*kw, C], so one tap's weights are contiguous across channels.
        let taps = kernelHeight * kernelWidth
        var tapWeights = [Float](repeating: 0, count: taps * channels)
        for c in 0..<channels {
            for tap in 0..<taps { tapWeights[tap * channels + c] = weight.data[c * taps + tap] }
        }
        let biases = bias?.data ?? [Float](repeating: 0, count: channels)
        let rowLength = width * channels
        let data = [Float](unsafeUninitializedCapacity: count) { outBuffer, initializedCount in
            withResidual(epilogue) { residual in
            x.data.withUnsafeBufferPointer { xBuffer in
            tapWeights.withUnsafeBufferPointer { weightBuffer in
            biases.withUnsafeBufferPointer { biasBuffer in
                let xBase = xBuffer.baseAddress!, outBase = outBuffer.baseAddress!
                let tapBase = weightBuffer.baseAddress!, biasBase = biasBuffer.baseAddress!
                parallelFor(batch * height) { task in
                    let n = task / height, oy = task % height
                    let image = xBase + n * height * rowLength
                    let out = outBase + (n * height + oy) * rowLength
                    for ox in 0..<width { (out + ox * channels).initialize(from: biasBase, count: channels) }
                    for i in 0..<kernelHeight {
                        let iy = oy - padding + i
                        guard iy >= 0 && iy < height else { continue }
                        let inRow = image + iy * rowLength
                        for j in 0..<kernelWidth {
                            // Output pixels ox whose input ox - padding + j is inside the row.
                            let shift = j - padding
                            let first = max(0, -shift), end = min(width, width - shift)
                            guard first < end else { continue }
                            addScaledRun(out + first * channels, inRow + (first + shift) * channels,
                                         pixels: end - first, channels: channels,
                                         weights: tapBase + (i * kernelWidth + j) * channels)
                        }
                    }
                    applyEpilogue(epilogue.activation, out, count: rowLength,
                                  residual: residual.map { $0 + (n * height + oy) * rowLength })
                }
            }
            }
            }
            }
            initializedCount = count
        }
        return FloatTensor(shape: x.shape, data: data)
    }

    /// out[p, c] += weights[c] * input[p, c] for `pixels` consecutive pixels of `channels` each.
    @inline(__always)
    private static func addScaledRun(_ out: UnsafeMutablePointer<Float>, _ input: UnsafePointer<Float>,
                                     pixels: Int, channels: Int, weights: UnsafePointer<Float>) {
        let vectorChannels = channels & ~7
        for p in 0..<pixels {
            let o = out + p * channels, x = input + p * channels
            var c = 0
            while c < vectorChannels {
                o.store8(o.load8(at: c) + weights.load8(at: c) * x.load8(at: c), at: c)
                c += 8
            }
            while c < channels { o[c] += weights[c] * x[c]; c += 1 }
        }
    }
}
