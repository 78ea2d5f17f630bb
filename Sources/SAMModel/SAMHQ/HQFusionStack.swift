import SAMKernels
import SAMTensor

/// One of SAM-HQ's three feature-fusion stacks, an nn.Sequential of a convolution (transposed 2x2/2
/// for `compress_vit_feat` and `embedding_encoder`, 3x3 pad 1 for `embedding_maskfeature`),
/// LayerNorm2d, GELU (index 2, no weights) and a second convolution of the same kind.
/// ref: segment_anything_hq/modeling/mask_decoder_hq.py MaskDecoderHQ.__init__ (HQ-SAM parameters)
struct HQFusionStack: Sendable {
    enum Layer: Sendable {
        case upsampling(NN.ConvTranspose2d)
        case convolution(NN.Conv2d)

        func callAsFunction(_ x: FloatTensor, observer: ModuleObserver?) -> FloatTensor {
            switch self {
            case .upsampling(let layer): layer(x, observer: observer)
            case .convolution(let layer): layer(x, observer: observer)
            }
        }
    }

    let path: String
    let first: Layer
    let norm: NN.LayerNorm2d
    let second: Layer

    /// ConvTranspose2d(in, middle, 2, 2), LayerNorm2d, GELU, ConvTranspose2d(middle, out, 2, 2): [1, in, g, g] -> [1, out, 4g, 4g].
    /// `inChannels` nil: read from the weights.
    static func upsampling(weights: WeightStore, path: String, inChannels: Int?, middle: Int, out: Int) throws(WeightError) -> HQFusionStack {
        HQFusionStack(path: path,
                      first: .upsampling(try NN.ConvTranspose2d(weights: weights, path: "\(path).0", inChannels: inChannels,
                                                                outChannels: middle, kernel: 2, stride: 2)),
                      norm: try NN.LayerNorm2d(weights: weights, path: "\(path).1", channels: middle),
                      second: .upsampling(try NN.ConvTranspose2d(weights: weights, path: "\(path).3", inChannels: middle,
                                                                 outChannels: out, kernel: 2, stride: 2)))
    }

    /// Conv2d(in, middle, 3, 1, 1), LayerNorm2d, GELU, Conv2d(middle, in, 3, 1, 1): the size kept.
    static func convolution(weights: WeightStore, path: String, channels: Int, middle: Int) throws(WeightError) -> HQFusionStack {
        HQFusionStack(path: path,
                      first: .convolution(try NN.Conv2d(weights: weights, path: "\(path).0", inChannels: channels,
                                                        outChannels: middle, kernel: 3, stride: 1, padding: 1)),
                      norm: try NN.LayerNorm2d(weights: weights, path: "\(path).1", channels: middle),
                      second: .convolution(try NN.Conv2d(weights: weights, path: "\(path).3", inChannels: middle,
                                                         outChannels: channels, kernel: 3, stride: 1, padding: 1)))
    }

    /// ref: torch.nn.Sequential.forward over the four modules (nn.GELU: exact, erf)
    func callAsFunction(_ x: FloatTensor, observer: ModuleObserver?) -> FloatTensor {
        var y = first(x, observer: observer)
        norm(&y, observer: observer)
        Kernels.gelu(&y)
        observer?("\(path).2", y)
        y = second(y, observer: observer)
        observer?(path, y)
        return y
    }

    /// Input channels of the first layer.
    var inChannels: Int {
        switch first {
        case .upsampling(let layer): layer.inChannels
        case .convolution(let layer): layer.inChannels
        }
    }
}
