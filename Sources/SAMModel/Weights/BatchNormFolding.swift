import SAMArchitecture
import SAMTensor

extension WeightStore {
    /// A convolution followed by eval-mode BatchNorm, as TinyViT's `Conv2d_BN` (`prefix.c`, `prefix.bn`),
    /// returned as one convolution. Accepts the unfused state dict (`c.weight`, `bn.weight/bias/running_mean/running_var`)
    /// or an already folded pair (`c.weight`, `c.bias`, as ONNX exports and .samw files hold it).
    /// ref: mobile_sam/modeling/tiny_vit_sam.py Conv2d_BN.fuse — w * gamma / sqrt(var + eps), beta - mean * gamma / sqrt(var + eps)
    ///
    /// A pointwise convolution (1x1, more than one input channel) is a matrix the model multiplies by
    /// (`matrixKeys`: `samconvert --dtype int8|q4` quantizes it); when it is stored int8, `int8` holds its
    /// codes as an [out, in] matrix with the BatchNorm folded into the row scales, for int8 products.
    package func takeConvBN(_ prefix: String, weightShape: [Int]? = nil, eps: Double = 1e-5) throws(WeightError)
        -> (weight: FloatTensor, bias: FloatTensor, int8: QuantizedWeight?) {
        let key = "\(prefix).c.weight"
        let weight = try take(key, shape: weightShape)
        let isPointwise = weight.shape.count == 4 && weight.shape[1] > 1 && weight.shape[2] == 1 && weight.shape[3] == 1
        if isPointwise { noteMatrix(key) }
        let codes = isPointwise ? int8Codes(key) : nil
        let outChannels = weight.shape[0]
        let bnPrefix = "\(prefix).bn"
        if !contains("\(bnPrefix).running_var") {
            let bias = try take("\(prefix).c.bias", shape: [outChannels])
            return (weight, bias, codes?.int8Matrix(rowScaleFactors: nil))
        }
        let convBias = try takeIfPresent("\(prefix).c.bias", shape: [outChannels])
        let gamma = try take("\(bnPrefix).weight", shape: [outChannels])
        let beta = try take("\(bnPrefix).bias", shape: [outChannels])
        let mean = try take("\(bnPrefix).running_mean", shape: [outChannels])
        let variance = try take("\(bnPrefix).running_var", shape: [outChannels])
        let folded = Self.foldBatchNorm(weight: weight, convBias: convBias, gamma: gamma, beta: beta,
                                        mean: mean, variance: variance, eps: eps)
        return (folded.weight, folded.bias, codes?.int8Matrix(rowScaleFactors: folded.scales))
    }

    /// Folds BatchNorm statistics into the preceding convolution or linear layer (weight [out, ...]).
    /// Done in double precision so folding adds no error beyond the final rounding to float32.
    /// `scales`: each output channel's factor gamma / sqrt(var + eps) (`BatchNormFold.scales`), which
    /// int8 codes of the weight fold into their row scales.
    package static func foldBatchNorm(weight: FloatTensor, convBias: FloatTensor?, gamma: FloatTensor, beta: FloatTensor,
                                     mean: FloatTensor, variance: FloatTensor, eps: Double)
        -> (weight: FloatTensor, bias: FloatTensor, scales: [Double]) {
        let channels = weight.shape[0]
        let folded = BatchNormFold.fold(channels: channels, weight: { Double(weight.data[$0]) }, weightCount: weight.count,
                                        convBias: convBias.map { bias in { Double(bias.data[$0]) } },
                                        gamma: { Double(gamma.data[$0]) }, beta: { Double(beta.data[$0]) },
                                        mean: { Double(mean.data[$0]) }, variance: { Double(variance.data[$0]) }, eps: eps)
        let scales = BatchNormFold.scales(gamma: { Double(gamma.data[$0]) }, variance: { Double(variance.data[$0]) },
                                          channels: channels, eps: eps)
        return (FloatTensor(shape: weight.shape, data: folded.weight.map { Float($0) }),
                FloatTensor(shape: [channels], data: folded.bias.map { Float($0) }), scales)
    }
}
