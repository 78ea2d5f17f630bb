import SAMBLAS
import SAMTensor

extension Kernels {
    /// PyTorch nn.Linear: x [..., in] (leading dims flattened to rows), weight [out, in],
    /// bias [out] or nil. Returns [..., out]. One sgemm, x * weightᵀ.
    public static func linear(_ x: FloatTensor, weight: FloatTensor, bias: FloatTensor?) -> FloatTensor {
        precondition(weight.shape.count == 2, "linear: weight must be [out, in], got \(weight.shape)")
        let outFeatures = weight.shape[0], inFeatures = weight.shape[1]
        precondition(x.shape.last == inFeatures,
                     "linear: input \(x.shape) does not end in \(inFeatures) features")
        if let bias { precondition(bias.count == outFeatures, "linear: bias \(bias.shape) for \(outFeatures) outputs") }
        let rows = x.shape.dropLast().reduce(1, *)
        // The sgemm accumulates onto the bias rows (beta = 1).
        var output = biasSeededRows(Array(x.shape.dropLast()) + [outFeatures], bias: bias)
        guard rows > 0, outFeatures > 0, inFeatures > 0 else { return output }
        x.data.withUnsafeBufferPointer { xBuffer in
            weight.data.withUnsafeBufferPointer { weightBuffer in
                output.data.withUnsafeMutableBufferPointer { outBuffer in
                    BLAS.sgemm(transA: false, transB: true, m: rows, n: outFeatures, k: inFeatures, alpha: 1,
                               a: xBuffer.baseAddress!, lda: inFeatures,
                               b: weightBuffer.baseAddress!, ldb: inFeatures,
                               beta: 1, c: outBuffer.baseAddress!, ldc: outFeatures)
                }
            }
        }
        return output
    }
}
