import SAMTensor
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

extension Kernels {
    /// max(x, 0) in place.
    package static func relu(_ x: inout FloatTensor) {
        let count = x.count
        guard count > 0 else { return }
        x.data.withUnsafeMutableBufferPointer { buffer in
            let p = buffer.baseAddress!
            parallelRanges(count) { range in
                for i in range { p[i] = max(p[i], 0) }
            }
        }
    }

    /// 1 / (1 + exp(-x)) in place, with libm's expf (SAM 2's sigmoid IoU head: a handful of values).
    package static func sigmoid(_ x: inout FloatTensor) {
        for i in x.data.indices { x.data[i] = sigmoid(x.data[i]) }
    }

    /// 1 / (1 + exp(-x)) with libm's expf: the one formula both sigmoids round alike.
    @inline(__always)
    private static func sigmoid(_ x: Float) -> Float { 1 / (1 + expf(-x)) }

    /// sigmoid(x) * scale + bias in place, rounded after each step as `sigmoid` then a multiply then an
    /// add would round them, in ranges over the workers (SAM 2's memory encoder takes a 1024x1024 mask so).
    package static func scaledSigmoid(_ x: inout FloatTensor, scale: Float, bias: Float) {
        let count = x.count
        guard count > 0 else { return }
        x.data.withUnsafeMutableBufferPointer { buffer in
            let p = buffer.baseAddress!
            parallelRanges(count) { range in
                for i in range {
                    var value = sigmoid(p[i])
                    value *= scale
                    value += bias
                    p[i] = value
                }
            }
        }
    }
}
