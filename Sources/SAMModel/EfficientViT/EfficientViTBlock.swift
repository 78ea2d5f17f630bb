import SAMKernels
import SAMTensor

extension EfficientViT {
    /// ops.py EfficientViTBlock (`context_module`, `local_module`, each a ResidualBlock with an
    /// identity shortcut): x + LiteMLA(x), then x + MBConv(x) with the "fewer norm" layout (biases and
    /// GELU on the expanding convs, BatchNorm on the projection).
    package struct EfficientViTBlock: Sendable {
        package let path: String
        package let context: LiteMLA
        package let local: MBConv

        /// ref: ops.py EfficientViTBlock.__init__ — LiteMLA(norm=(None, norm)); MBConv(use_bias=(True, True, False),
        /// norm=(None, None, norm), act_func=(act, act, None))
        init(weights: WeightStore, path: String, channels: Int, expandRatio: Double, scales: [Int], tokens: Int,
             config: EfficientViTConfig) throws(WeightError) {
            self.path = path
            context = try LiteMLA(weights: weights, path: "\(path).context_module.main", channels: channels, config: config,
                                  scales: scales, tokens: tokens)
            let spec = LocalBlockSpec(inChannels: channels, outChannels: channels, stride: 1, expandRatio: expandRatio,
                                      fewerNorm: true, batchNormEps: config.batchNormEps)
            local = try MBConv(weights: weights, path: "\(path).local_module.main", spec: spec)
        }

        /// ref: ops.py EfficientViTBlock.forward
        func callAsFunction(_ x: FloatTensor, observer: ModuleObserver?) -> FloatTensor {
            var y = EfficientViT.residual(x, path: "\(path).context_module", observer: observer) { x, residual, observer in
                context(x, plus: residual, observer: observer)
            }
            y = EfficientViT.residual(y, path: "\(path).local_module", observer: observer) { x, residual, observer in
                local(x, plus: residual, observer: observer)
            }
            observer?(path, y)
            return y
        }
    }
}
