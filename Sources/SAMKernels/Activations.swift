import SAMTensor
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

extension Kernels {
    /// Exact GELU, 0.5 * x * (1 + erf(x / sqrt(2))), as PyTorch's nn.GELU() default (not the tanh
    /// approximation), in place.
    public static func gelu(_ x: inout FloatTensor) {
        let count = x.count
        guard count > 0 else { return }
        let inverseSqrt2: Float = 0.707_106_781_186_547_5
        x.data.withUnsafeMutableBufferPointer { buffer in
            let p = buffer.baseAddress!
            // erff costs tens of cycles, so smaller chunks already pay for a thread.
            parallelRanges(count, minimumChunk: 8_192) { range in
                for i in range {
                    let v = p[i]
                    p[i] = 0.5 * v * (1 + erff(v * inverseSqrt2))
                }
            }
        }
    }

    /// max(x, 0) in place.
    public static func relu(_ x: inout FloatTensor) {
        let count = x.count
        guard count > 0 else { return }
        x.data.withUnsafeMutableBufferPointer { buffer in
            let p = buffer.baseAddress!
            parallelRanges(count) { range in
                for i in range { p[i] = max(p[i], 0) }
            }
        }
    }
}
