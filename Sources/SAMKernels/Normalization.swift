import SAMTensor
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

extension Kernels {
    /// PyTorch nn.LayerNorm over the last dimension, in place: biased variance, `eps` inside the
    /// square root, then elementwise affine with `weight` and `bias` (both [last dim]).
    package static func layerNorm(_ x: inout FloatTensor, weight: FloatTensor, bias: FloatTensor, eps: Float) {
        guard let width = x.shape.last, width > 0, x.count > 0 else { return }
        checkLayerNorm(width: width, weight: weight, bias: bias)
        let rows = x.count / width
        x.data.withUnsafeMutableBufferPointer { xBuffer in
            layerNormRows(from: UnsafePointer(xBuffer.baseAddress!), to: xBuffer.baseAddress!, rows: rows, width: width,
                          weight: weight, bias: bias, eps: eps)
        }
    }

    /// nn.LayerNorm over the last dimension into a new tensor (x is left as it is), saving the
    /// copy an in-place norm of a value that is still needed would make.
    package static func layerNormed(_ x: FloatTensor, weight: FloatTensor, bias: FloatTensor, eps: Float) -> FloatTensor {
        guard let width = x.shape.last, width > 0, x.count > 0 else { return x }
        checkLayerNorm(width: width, weight: weight, bias: bias)
        let rows = x.count / width
        let data = [Float](unsafeUninitializedCapacity: x.count) { outBuffer, initializedCount in
            x.data.withUnsafeBufferPointer { xBuffer in
                layerNormRows(from: xBuffer.baseAddress!, to: outBuffer.baseAddress!, rows: rows, width: width,
                              weight: weight, bias: bias, eps: eps)
            }
            initializedCount = x.count
        }
        return FloatTensor(shape: x.shape, data: data)
    }

    /// `layerNorm` in place, returning as well x + addend (the normalised x; addend of x's
    /// shape) from the same pass over the rows: `Kernels.sum(x, addend)` after the norm, the
    /// same bits, without reading the normalised tensor again (SAM's decoder adds the image
    /// positional encoding to every block's normalised image tokens).
    package static func layerNorm(_ x: inout FloatTensor, weight: FloatTensor, bias: FloatTensor, eps: Float,
                                 returningSumWith addend: FloatTensor) -> FloatTensor {
        precondition(addend.shape == x.shape, "layerNorm: addend \(addend.shape) is not the input's \(x.shape)")
        guard let width = x.shape.last, width > 0, x.count > 0 else { return addend }
        checkLayerNorm(width: width, weight: weight, bias: bias)
        let rows = x.count / width
        let sum = [Float](unsafeUninitializedCapacity: x.count) { sumBuffer, initializedCount in
            x.data.withUnsafeMutableBufferPointer { xBuffer in
            addend.data.withUnsafeBufferPointer { addendBuffer in
            weight.data.withUnsafeBufferPointer { weightBuffer in
            bias.data.withUnsafeBufferPointer { biasBuffer in
                let (xs, sums, addends) = (xBuffer.baseAddress!, sumBuffer.baseAddress!, addendBuffer.baseAddress!)
                parallelRanges(rows, minimumChunk: max(1, 16_384 / width)) { rowRange in
                    for r in rowRange {
                        let row = xs + r * width
                        layerNormRow(row, width: width, gamma: weightBuffer.baseAddress!, beta: biasBuffer.baseAddress!,
                                     eps: eps, into: row)
                        let out = sums + r * width, other = addends + r * width
                        var j = 0
                        while j + 8 <= width { out.store8(row.load8(at: j) + other.load8(at: j), at: j); j += 8 }
                        while j < width { (out + j).initialize(to: row[j] + other[j]); j += 1 }
                    }
                }
            }
            }
            }
            }
            initializedCount = x.count
        }
        return FloatTensor(shape: x.shape, data: sum)
    }

    private static func checkLayerNorm(width: Int, weight: FloatTensor, bias: FloatTensor) {
        precondition(weight.count == width && bias.count == width,
                     "layerNorm: weight \(weight.shape) / bias \(bias.shape) do not match last dim \(width)")
    }

    /// Normalises `rows` rows of `width` from `source` into `destination` (which may be `source`).
    private static func layerNormRows(from source: UnsafePointer<Float>, to destination: UnsafeMutablePointer<Float>,
                                      rows: Int, width: Int, weight: FloatTensor, bias: FloatTensor, eps: Float) {
        weight.data.withUnsafeBufferPointer { weightBuffer in
            bias.data.withUnsafeBufferPointer { biasBuffer in
                let gamma = weightBuffer.baseAddress!, beta = biasBuffer.baseAddress!
                parallelRanges(rows, minimumChunk: max(1, 16_384 / width)) { rowRange in
                    for r in rowRange {
                        layerNormRow(source + r * width, width: width, gamma: gamma, beta: beta, eps: eps,
                                     into: destination + r * width)
                    }
                }
            }
        }
    }

    /// One row of nn.LayerNorm: `width` values from `row` into `out` (which may be `row`).
    @inline(__always)
    static func layerNormRow(_ row: UnsafePointer<Float>, width: Int, gamma: UnsafePointer<Float>, beta: UnsafePointer<Float>,
                             eps: Float, into out: UnsafeMutablePointer<Float>) {
        let vectorWidth = width & ~7
        // Two passes (mean, then squared deviations) stay accurate when the mean is large
        // compared with the spread.
        var sums = SIMD8<Float>(repeating: 0)
        var j = 0
        while j < vectorWidth { sums += row.load8(at: j); j += 8 }
        var sum = horizontalSum(sums)
        while j < width { sum += row[j]; j += 1 }
        let mean = sum / Float(width)
        var squares8 = SIMD8<Float>(repeating: 0)
        j = 0
        while j < vectorWidth {
            let d = row.load8(at: j) - mean
            squares8 += d * d
            j += 8
        }
        var squares = horizontalSum(squares8)
        while j < width {
            let d = row[j] - mean
            squares += d * d
            j += 1
        }
        let inverseStd = 1 / (squares / Float(width) + eps).squareRoot()
        j = 0
        while j < vectorWidth {
            out.store8((row.load8(at: j) - mean) * inverseStd * gamma.load8(at: j) + beta.load8(at: j), at: j)
            j += 8
        }
        while j < width {
            out[j] = (row[j] - mean) * inverseStd * gamma[j] + beta[j]
            j += 1
        }
    }

    /// SAM's LayerNorm2d, in place: for NCHW input, normalise the C values at every pixel
    /// (biased variance, `eps` inside the square root), then apply per-channel weight and bias.
    package static func layerNorm2d(_ x: inout FloatTensor, weight: FloatTensor, bias: FloatTensor, eps: Float) {
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
