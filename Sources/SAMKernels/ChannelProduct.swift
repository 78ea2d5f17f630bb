import SAMBLAS

extension Kernels {
    /// A 1x1 convolution on a block of pixels, finished in cache: for every output channel o,
    /// out[o, 0..<pixels] = epilogue(bias[o] + Σ_c weight[o, c] * x[c, 0..<pixels]), with one
    /// single-threaded sgemm. weight is [outChannels, inChannels]; rows of `x` are `xStride`
    /// apart, rows of `out` (and of `residual`, same layout) `outStride` apart. The epilogue adds
    /// `residual` (when given), then `activation`.
    @inline(__always)
    static func channelProduct(weight: UnsafePointer<Float>, bias: UnsafePointer<Float>?, outChannels: Int, inChannels: Int,
                               x: UnsafePointer<Float>, xStride: Int, pixels: Int,
                               into out: UnsafeMutablePointer<Float>, outStride: Int,
                               activation: Epilogue.Activation, residual: UnsafePointer<Float>?) {
        for channel in 0..<outChannels {
            (out + channel * outStride).initialize(repeating: bias?[channel] ?? 0, count: pixels)
        }
        BLAS.sgemm(transA: false, transB: false, m: outChannels, n: pixels, k: inChannels, alpha: 1,
                   a: weight, lda: inChannels, b: x, ldb: xStride, beta: 1, c: out, ldc: outStride)
        guard activation != .none || residual != nil else { return }
        for channel in 0..<outChannels {
            applyEpilogue(activation, out + channel * outStride, count: pixels,
                          residual: residual.map { $0 + channel * outStride })
        }
    }
}
