import SAMArchitecture
import SAMTensor

extension TinyViT {
    /// The relative-position index table of TinyViT's attention (upstream `attention_bias_idxs`,
    /// a non-persistent buffer, so it is never in a state dict and is rebuilt here).
    ///
    /// The numbering is `AttentionBiasOffsets`'.
    public struct AttentionBiasIndex: Sendable, Equatable {
        public let resolution: GridSize
        /// [N * N], row-major [N, N] with N = resolution.height * resolution.width.
        public let indices: [Int]
        /// Number of distinct offsets (the second dimension of `attention_biases`).
        public let offsetCount: Int

        public init(resolution: GridSize) {
            self.resolution = resolution
            let offsets = AttentionBiasOffsets(height: resolution.height, width: resolution.width)
            indices = offsets.indices
            offsetCount = offsets.offsetCount
        }

        /// The full bias `attention_biases[:, attention_bias_idxs]` ([H, N, N]) that eval-mode
        /// upstream caches as `ab` (Attention.train, L250-258), from `attentionBiases` [H, offsetCount].
        public func expand(_ attentionBiases: FloatTensor) -> FloatTensor {
            precondition(attentionBiases.shape.count == 2 && attentionBiases.shape[1] == offsetCount,
                         "attention_biases \(attentionBiases.shape) does not have \(offsetCount) offsets")
            let heads = attentionBiases.shape[0], pairs = indices.count
            let data = [Float](unsafeUninitializedCapacity: heads * pairs) { buffer, initializedCount in
                attentionBiases.data.withUnsafeBufferPointer { biases in
                    indices.withUnsafeBufferPointer { index in
                        for head in 0..<heads {
                            let source = biases.baseAddress! + head * offsetCount
                            let destination = buffer.baseAddress! + head * pairs
                            for pair in 0..<pairs { (destination + pair).initialize(to: source[index[pair]]) }
                        }
                    }
                }
                initializedCount = heads * pairs
            }
            let n = resolution.height * resolution.width
            return FloatTensor(shape: [heads, n, n], data: data)
        }
    }
}
