import SAMKernels
import SAMTensor

extension EfficientViT {
    /// What build_local_block is given: the sizes, and whether the block has "fewer norms" (its
    /// expanding convs carry a bias and no BatchNorm).
    struct LocalBlockSpec {
        var inChannels: Int
        var outChannels: Int
        var stride: Int
        var expandRatio: Double
        var fewerNorm: Bool
        var batchNormEps: Double

        /// The expanding convs (all but the last): GELU after each; bias and no norm with fewer norms,
        /// else bias-free with BatchNorm. ref: backbone.py build_local_block — use_bias / norm by fewer_norm
        var expansionLayout: ConvLayer.Layout { .init(bias: fewerNorm, norm: !fewerNorm, activation: .geluTanh) }
        /// The projecting conv: bias-free, BatchNorm, no activation.
        var projectionLayout: ConvLayer.Layout { .init(bias: false, norm: true, activation: .none) }

        /// The mid width the weights give must be round(in * expand_ratio), and at least 1.
        func requireMidChannels(_ mid: Int, key: String, source: String) throws(WeightError) {
            let expected = EfficientViTConfig.midChannels(inChannels, expandRatio)
            if mid == expected && mid >= 1 { return }
            throw .invalid(key: key, reason: "the weights give \(mid) mid channels, the config's expand ratio \(expandRatio) "
                           + "gives round(\(inChannels) * \(expandRatio)) = \(expected)", source: source)
        }
    }

    /// One of the backbone's convolutional blocks, as build_local_block makes it.
    enum LocalBlock: Sendable {
        case res(ResBlock)
        case fmb(FusedMBConv)
        case mb(MBConv)

        /// ref: backbone.py EfficientViTLargeBackbone.build_local_block
        init(_ type: EfficientViTBlockType, weights: WeightStore, path: String, spec: LocalBlockSpec) throws(WeightError) {
            switch type {
            case .res: self = .res(try ResBlock(weights: weights, path: path, spec: spec))
            case .fmb: self = .fmb(try FusedMBConv(weights: weights, path: path, spec: spec))
            case .mb: self = .mb(try MBConv(weights: weights, path: path, spec: spec))
            case .att, .att3:
                throw .invalid(key: path, reason: "an attention stage has no local block of its own", source: weights.source)
            }
        }

        var outChannels: Int {
            switch self {
            case .res(let block): block.outChannels
            case .fmb(let block): block.outChannels
            case .mb(let block): block.outChannels
            }
        }

        /// `residual` is added after the block (fused unless observed; see ConvLayer).
        func callAsFunction(_ x: FloatTensor, plus residual: FloatTensor?, observer: ModuleObserver?) -> FloatTensor {
            switch self {
            case .res(let block): block(x, plus: residual, observer: observer)
            case .fmb(let block): block(x, plus: residual, observer: observer)
            case .mb(let block): block(x, plus: residual, observer: observer)
            }
        }
    }
}
