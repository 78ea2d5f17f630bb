import SAMTensor

extension Kernels {
    /// `nn.MaxPool2d(kernel_size=stride, stride=stride, ceil_mode=False)` on channels-last token
    /// grids: x [B, H*W, rowWidth] holds B grids of H x W tokens; the result [B, (H/s)*(W/s), C]
    /// takes, for each output cell and each of the C channels `channels` (a range of the row,
    /// default all of it), the maximum over its s x s input cells. Rows and columns past the last
    /// whole s-block are dropped, as floor mode does. NaN propagates, as torch's max pool does.
    /// ref: torch.nn.functional.max_pool2d; sam2/modeling/backbones/hieradet.py do_pool
    public static func maxPoolTokens(_ x: FloatTensor, height: Int, width: Int, stride: Int,
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
                            out.initialize(from: first, count: width_)
                            for i in 0..<stride {
                                for j in 0..<stride where i + j > 0 {
                                    let cell = first + (i * width + j) * rowWidth
                                    for c in 0..<width_ {
                                        let value = cell[c]
                                        // max_pool2d: a NaN wins (val > max || isnan(val)).
                                        if value > out[c] || value.isNaN { out[c] = value }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            initialized = count
        }
        return FloatTensor(shape: [batch, outHeight * outWidth, width_], data: data)
    }

    /// The channels `range` of every row of x [..., C]: x[..., range] as a tensor of its own.
    public static func columns(_ x: FloatTensor, _ range: Range<Int>) -> FloatTensor {
        precondition(!x.shape.isEmpty, "columns: scalar input")
        let rowWidth = x.shape[x.shape.count - 1]
        precondition(range.lowerBound >= 0 && range.upperBound <= rowWidth, "columns: \(range) outside a row of \(rowWidth)")
        let rows = rowWidth == 0 ? 0 : x.count / rowWidth, width = range.count
        guard rows * width > 0 else { return FloatTensor(zeros: Array(x.shape.dropLast()) + [width]) }
        let data = [Float](unsafeUninitializedCapacity: rows * width) { buffer, initialized in
            x.data.withUnsafeBufferPointer { source in
                let from = source.baseAddress!, to = buffer.baseAddress!
                parallelRanges(rows, minimumChunk: max(1, 32_768 / width)) { chunk in
                    for row in chunk {
                        (to + row * width).initialize(from: from + row * rowWidth + range.lowerBound, count: width)
                    }
                }
            }
            initialized = rows * width
        }
        return FloatTensor(shape: Array(x.shape.dropLast()) + [width], data: data)
    }
}
