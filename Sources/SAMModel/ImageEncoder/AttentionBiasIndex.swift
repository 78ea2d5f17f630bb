import SAMArchitecture
import SAMKernels
import SAMTensor

extension TinyViT {
    /// The relative-position index table of TinyViT's attention (upstream `attention_bias_idxs`,
    /// a non-persistent buffer, so it is never in a state dict and is rebuilt here).
    ///
    /// Upstream numbers the offsets (|Δrow|, |Δcolumn|) in the order it first meets them
    /// (`AttentionBiasOffsets`). Its first query is position (0, 0), whose keys, taken in row-major
    /// order, meet every offset once and in row-major order, so offset (dr, dc) is number
    /// dr * width + dc. `expand` applies that closed form; no table is stored.
    package struct AttentionBiasIndex: Sendable, Equatable {
        package let resolution: GridSize

        package init(resolution: GridSize) {
            self.resolution = resolution
        }

        /// Positions in the window (N).
        package var positions: Int { resolution.height * resolution.width }

        /// Number of distinct offsets (the second dimension of `attention_biases`): one per position.
        package var offsetCount: Int { resolution.height * resolution.width }

        /// The full bias `attention_biases[:, attention_bias_idxs]` ([H, N, N]) that eval-mode
        /// upstream caches as `ab` (Attention.train, L250-258), from `attentionBiases` [H, offsetCount].
        /// Built a key row at a time: the keys of one row of the window read offsets
        /// |Δrow| * width + |Δcolumn|, a run of the table walked down and up again.
        package func expand(_ attentionBiases: FloatTensor) -> FloatTensor {
            precondition(attentionBiases.shape.count == 2 && attentionBiases.shape[1] == offsetCount,
                         "attention_biases \(attentionBiases.shape) does not have \(offsetCount) offsets")
            let heads = attentionBiases.shape[0], (height, width) = (resolution.height, resolution.width)
            let n = height * width
            let data = [Float](unsafeUninitializedCapacity: heads * n * n) { buffer, initializedCount in
                attentionBiases.data.withUnsafeBufferPointer { biases in
                    let source = biases.baseAddress!, destination = buffer.baseAddress!
                    Kernels.parallelFor(heads * height) { task in
                        let head = task / height, row1 = task % height
                        let table = source + head * n
                        for column1 in 0..<width {
                            let query = row1 * width + column1
                            for row2 in 0..<height {
                                let run = table + abs(row1 - row2) * width
                                let keys = destination + (head * n + query) * n + row2 * width
                                for column2 in 0..<width { (keys + column2).initialize(to: run[abs(column1 - column2)]) }
                            }
                        }
                    }
                }
                initializedCount = heads * n * n
            }
            return FloatTensor(shape: [heads, n, n], data: data)
        }
    }
}
