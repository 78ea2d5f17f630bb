import SAMTensor
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

extension Kernels {
    /// PyTorch nn.LayerNorm over the last dimension, in place: biased variance, `eps` inside the
    /// square root, then elementwise affine with `weight` and `bias` (both [last dim]).
    public static func layerNorm(_ x: inout FloatTensor, weight: FloatTensor, bias: FloatTensor, eps: Float) {
        guard let width = x.shape.last, width > 0, x.count > 0 else { return }
        precondition(weight.count == width && bias.count == width,
                     "layerNorm: weight \(weight.shape) / bias \(bias.shape) do not match last dim \(width)")
        let rows = x.count / width
        x.data.withUnsafeMutableBufferPointer { xBuffer in
            weight.data.withUnsafeBufferPointer { weightBuffer in
                bias.data.withUnsafeBufferPointer { biasBuffer in
                    let base = xBuffer.baseAddress!
                    let gamma = weightBuffer.baseAddress!, beta = biasBuffer.baseAddress!
                    parallelRanges(rows, minimumChunk: max(1, 16_384 / width)) { rowRange in
                        for r in rowRange {
                            let row = base + r * width
                            // Two passes (mean, then squared deviations) stay accurate when
                            // the mean is large compared with the spread.
                            var sum: Float = 0
                            for j in 0..<width { sum += row[j] }
                            let mean = sum / Float(width)
                            var squares: Float = 0
                            for j in 0..<width {
                                let d = row[j] - mean
                                squares += d * d
                            }
                            let inverseStd = 1 / sqrtf(squares / Float(width) + eps)
                            for j in 0..<width {
                                row[j] = (row[j] - mean) * inverseStd * gamma[j] + beta[j]
                            }
                        }
                    }
                }
            }
        }
    }

    /// SAM's LayerNorm2d, in place: for NCHW input, normalise the C values at every pixel
    /// (biased variance, `eps` inside the square root), then apply per-channel weight and bias.
    public static func layerNorm2d(_ x: inout FloatTensor, weight: FloatTensor, bias: FloatTensor, eps: Float) {
        precondition(x.shape.count == 4, "layerNorm2d: expected NCHW, got \(x.shape)")
        let batch = x.shape[0], channels = x.shape[1], pixels = x.shape[2] * x.shape[3]
        precondition(weight.count == channels && bias.count == channels,
                     "layerNorm2d: weight \(weight.shape) / bias \(bias.shape) do not match \(channels) channels")
        guard x.count > 0 else { return }
        // Work on tiles of pixels so each channel's slice is a contiguous run (vectorisable)
        // and the per-pixel statistics stay in L1.
        let tileSize = 512
        let tilesPerImage = (pixels + tileSize - 1) / tileSize
        x.data.withUnsafeMutableBufferPointer { xBuffer in
            weight.data.withUnsafeBufferPointer { weightBuffer in
                bias.data.withUnsafeBufferPointer { biasBuffer in
                    let base = xBuffer.baseAddress!
                    let gamma = weightBuffer.baseAddress!, beta = biasBuffer.baseAddress!
                    parallelForChunks(batch * tilesPerImage) { taskRange in
                        let mean = UnsafeMutablePointer<Float>.allocate(capacity: tileSize)
                        let inverseStd = UnsafeMutablePointer<Float>.allocate(capacity: tileSize)
                        defer { mean.deallocate(); inverseStd.deallocate() }
                        for task in taskRange {
                            let image = base + (task / tilesPerImage) * channels * pixels
                            let start = (task % tilesPerImage) * tileSize
                            let length = min(tileSize, pixels - start)
                            mean.update(repeating: 0, count: length)
                            inverseStd.update(repeating: 0, count: length)
                            for c in 0..<channels {
                                let slice = image + c * pixels + start
                                for p in 0..<length { mean[p] += slice[p] }
                            }
                            let inverseChannels = 1 / Float(channels)
                            for p in 0..<length { mean[p] *= inverseChannels }
                            for c in 0..<channels {
                                let slice = image + c * pixels + start
                                for p in 0..<length {
                                    let d = slice[p] - mean[p]
                                    inverseStd[p] += d * d
                                }
                            }
                            for p in 0..<length {
                                inverseStd[p] = 1 / sqrtf(inverseStd[p] * inverseChannels + eps)
                            }
                            for c in 0..<channels {
                                let slice = image + c * pixels + start
                                let g = gamma[c], b = beta[c]
                                for p in 0..<length {
                                    slice[p] = (slice[p] - mean[p]) * inverseStd[p] * g + b
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
