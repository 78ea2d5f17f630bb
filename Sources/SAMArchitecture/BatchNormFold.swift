/// Eval-mode BatchNorm folded into the convolution before it (TinyViT's `Conv2d_BN`), in double
/// precision so the fold adds nothing beyond the final rounding. The importer folds unfused state
/// dicts with it; the runtime folds weights handed to it unfused.
/// ref: mobile_sam/modeling/tiny_vit_sam.py Conv2d_BN.fuse: w * g / sqrt(var + eps), b - mean * g / sqrt(var + eps)
public enum BatchNormFold {
    /// The folded weights (same layout: `channels` blocks of `weight.count / channels`) and bias,
    /// from each operand read element by element (any storage type).
    public static func fold(channels: Int, weight: (Int) -> Double, weightCount: Int, convBias: ((Int) -> Double)?,
                            gamma: (Int) -> Double, beta: (Int) -> Double, mean: (Int) -> Double,
                            variance: (Int) -> Double, eps: Double) -> (weight: [Double], bias: [Double]) {
        precondition(channels > 0 && weightCount % channels == 0, "BatchNormFold: \(weightCount) weights for \(channels) channels")
        let perChannel = weightCount / channels
        var folded = [Double](repeating: 0, count: weightCount)
        var bias = [Double](repeating: 0, count: channels)
        let scales = scales(gamma: gamma, variance: variance, channels: channels, eps: eps)
        for channel in 0..<channels {
            let scale = scales[channel]
            for index in (channel * perChannel)..<((channel + 1) * perChannel) { folded[index] = weight(index) * scale }
            bias[channel] = beta(channel) + ((convBias?(channel) ?? 0) - mean(channel)) * scale
        }
        return (folded, bias)
    }

    /// Each channel's factor gamma / sqrt(variance + eps): what folding multiplies its weights by.
    public static func scales(gamma: (Int) -> Double, variance: (Int) -> Double, channels: Int, eps: Double) -> [Double] {
        (0..<channels).map { gamma($0) / (variance($0) + eps).squareRoot() }
    }
}
