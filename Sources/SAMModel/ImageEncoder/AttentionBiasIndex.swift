import SAMTensor

extension TinyViT {
    /// The relative-position index table of TinyViT's attention (upstream `attention_bias_idxs`,
    /// a non-persistent buffer, so it is never in a state dict and is rebuilt here).
    ///
    /// Window positions are (row, column) pairs in `itertools.product(range(h), range(w))` order;
    /// every ordered pair of positions maps to the offset (|Δrow|, |Δcolumn|), and offsets are
    /// numbered in the order they are first met (a Python dict keeps insertion order).
    // ref: tiny_vit_sam.py Attention.__init__ (L233-248)
    public struct AttentionBiasIndex: Sendable, Equatable {
        public let resolution: GridSize
        /// [N * N], row-major [N, N] with N = resolution.height * resolution.width.
        public let indices: [Int]
        /// Number of distinct offsets (the second dimension of `attention_biases`).
        public let offsetCount: Int

        public init(resolution: GridSize) {
            self.resolution = resolution
            let points = (0..<resolution.height).flatMap { row in (0..<resolution.width).map { column in (row, column) } }
            // Offsets (|Δrow| < height, |Δcolumn| < width) numbered by first appearance; a flat
            // table replaces upstream's dict (-1: not seen yet), same numbering, no hashing.
            var offsetIndex = [Int](repeating: -1, count: resolution.height * resolution.width)
            var offsetCount = 0
            var indices: [Int] = []
            indices.reserveCapacity(points.count * points.count)
            for p1 in points {
                for p2 in points {
                    let slot = abs(p1.0 - p2.0) * resolution.width + abs(p1.1 - p2.1)
                    if offsetIndex[slot] < 0 {
                        offsetIndex[slot] = offsetCount
                        offsetCount += 1
                    }
                    indices.append(offsetIndex[slot])
                }
            }
            self.indices = indices
            self.offsetCount = offsetCount
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
