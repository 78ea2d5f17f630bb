import SAMTensor

extension Kernels {
    /// x += y elementwise (same shape).
    package static func add(_ x: inout FloatTensor, _ y: FloatTensor) {
        precondition(x.shape == y.shape, "add: shapes \(x.shape) and \(y.shape) differ")
        let count = x.count
        guard count > 0 else { return }
        x.data.withUnsafeMutableBufferPointer { xBuffer in
            y.data.withUnsafeBufferPointer { yBuffer in
                let xp = xBuffer.baseAddress!, yp = yBuffer.baseAddress!
                parallelRanges(count) { range in
                    for i in range { xp[i] += yp[i] }
                }
            }
        }
    }

    /// x += y repeated: element i of x gains y[i % y.count], x.count a whole number of y's (one
    /// table added to every image of a batch, such as Hiera's position embedding).
    package static func add(_ x: inout FloatTensor, repeating y: FloatTensor) {
        let period = y.count, count = x.count
        precondition(period > 0 && count % period == 0, "add: \(y.shape) does not repeat to \(x.shape)")
        guard count > 0 else { return }
        x.data.withUnsafeMutableBufferPointer { xBuffer in
            y.data.withUnsafeBufferPointer { yBuffer in
                let xp = xBuffer.baseAddress!, yp = yBuffer.baseAddress!
                parallelRanges(count) { range in
                    // Each range in runs that stay inside one repeat of y.
                    var i = range.lowerBound
                    while i < range.upperBound {
                        let offset = i % period, end = min(range.upperBound, i - offset + period)
                        addInPlace(xp + i, yp + offset, count: end - i)
                        i = end
                    }
                }
            }
        }
    }

    /// x + y elementwise (same shape) into a new tensor: one pass, where copying x and then
    /// adding in place would make two.
    package static func sum(_ x: FloatTensor, _ y: FloatTensor) -> FloatTensor {
        precondition(x.shape == y.shape, "sum: shapes \(x.shape) and \(y.shape) differ")
        let count = x.count
        let data = [Float](unsafeUninitializedCapacity: count) { outBuffer, initializedCount in
            x.data.withUnsafeBufferPointer { xBuffer in
                y.data.withUnsafeBufferPointer { yBuffer in
                    guard count > 0 else { return }
                    let xp = xBuffer.baseAddress!, yp = yBuffer.baseAddress!, out = outBuffer.baseAddress!
                    parallelRanges(count) { range in
                        for i in range { (out + i).initialize(to: xp[i] + yp[i]) }
                    }
                }
            }
            initializedCount = count
        }
        return FloatTensor(shape: x.shape, data: data)
    }

    /// x[n, c, h, w] += channelBias[c] for an NCHW tensor.
    package static func addBias(_ x: inout FloatTensor, channelBias: FloatTensor) {
        precondition(x.shape.count == 4, "addBias: expected NCHW, got \(x.shape)")
        let channels = x.shape[1], planeSize = x.shape[2] * x.shape[3]
        precondition(channelBias.count == channels,
                     "addBias: \(channelBias.count) biases for \(channels) channels")
        let planes = x.shape[0] * channels
        guard planes > 0, planeSize > 0 else { return }
        x.data.withUnsafeMutableBufferPointer { xBuffer in
            channelBias.data.withUnsafeBufferPointer { biasBuffer in
                let xp = xBuffer.baseAddress!, bias = biasBuffer.baseAddress!
                parallelRanges(planes, minimumChunk: max(1, 32_768 / planeSize)) { planeRange in
                    for plane in planeRange {
                        let b = bias[plane % channels]
                        let row = xp + plane * planeSize
                        for i in 0..<planeSize { row[i] += b }
                    }
                }
            }
        }
    }

    /// x *= s elementwise.
    package static func scale(_ x: inout FloatTensor, by s: Float) {
        let count = x.count
        guard count > 0 else { return }
        x.data.withUnsafeMutableBufferPointer { xBuffer in
            let xp = xBuffer.baseAddress!
            parallelRanges(count) { range in
                for i in range { xp[i] *= s }
            }
        }
    }
}
