import SAMTensor

extension Kernels {
    /// `nn.MaxPool2d(kernel_size=stride, stride=stride, ceil_mode=False)` on channels-last token
    /// grids: x [B, H*W, rowWidth] holds B grids of H x W tokens; the result [B, (H/s)*(W/s), C]
    /// takes, for each output cell and each of the C channels `channels` (a range of the row,
    /// default all of it), the maximum over its s x s input cells. Rows and columns past the last
    /// whole s-block are dropped, as floor mode does. NaN propagates, as torch's max pool does.
    /// ref: torch.nn.functional.max_pool2d; sam2/modeling/backbones/hieradet.py do_pool
    package static func maxPoolTokens(_ x: FloatTensor, height: Int, width: Int, stride: Int,
                                     channels: Range<Int>? = nil) -> FloatTensor {
        precondition(x.shape.count == 3 && x.shape[1] == height * width,
                     "maxPoolTokens: \(x.shape) is not [B, \(height)*\(width), C]")
        precondition(stride >= 1, "maxPoolTokens: stride \(stride) must be positive")
        let rowWidth = x.shape[2], range = channels ?? 0..<rowWidth
        precondition(range.lowerBound >= 0 && range.upperBound <= rowWidth, "maxPoolTokens: channels \(range) outside \(rowWidth)")
        let batch = x.shape[0], outHeight = height / stride, outWidth = width / stride, width_ = range.count
        let count = batch * outHeight * outWidth * width_
        guard count > 0 else { return FloatTensor(zeros: [batch, outHeight * outWidth, width_]) }
        let data = [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
            x.data.withUnsafeBufferPointer { source in
                let from = source.baseAddress!, to = buffer.baseAddress!
                parallelForChunks(batch * outHeight) { rows in
                    for task in rows {
                        let b = task / outHeight, row = task % outHeight
                        for column in 0..<outWidth {
                            let out = to + ((b * outHeight + row) * outWidth + column) * width_
                            let first = from + ((b * height + row * stride) * width + column * stride) * rowWidth + range.lowerBound
                            poolCell(first, rowStride: width * rowWidth, columnStride: rowWidth, stride: stride,
                                     channels: width_, into: out)
                        }
                    }
                }
            }
            initialized = count
        }
        return FloatTensor(shape: [batch, outHeight * outWidth, width_], data: data)
    }

    /// out[c] = the maximum of first[c] over the stride x stride cells `rowStride` and `columnStride`
    /// apart, eight channels at a time; a NaN wins, as in max_pool2d (val > max || isnan(val)),
    /// and the cells are taken in the same row-major order.
    @inline(__always)
    static func poolCell(_ first: UnsafePointer<Float>, rowStride: Int, columnStride: Int, stride: Int,
                                 channels: Int, into out: UnsafeMutablePointer<Float>) {
        var c = 0
        while c + 8 <= channels {
            var maximum = first.load8(at: c)
            for i in 0..<stride {
                for j in 0..<stride where i + j > 0 {
                    let value = (first + i * rowStride + j * columnStride).load8(at: c)
                    maximum.replace(with: value, where: (value .> maximum) .| (value .!= value))
                }
            }
            out.store8(maximum, at: c)
            c += 8
        }
        while c < channels {
            var maximum = first[c]
            for i in 0..<stride {
                for j in 0..<stride where i + j > 0 {
                    let value = first[i * rowStride + j * columnStride + c]
                    if value > maximum || value.isNaN { maximum = value }
                }
            }
            (out + c).initialize(to: maximum)
            c += 1
        }
    }
}
